// Walk index build: the embeddings of entities the index does not hold yet (new, or changed since it was built).
// @param ids: LIST  entity ids
UNWIND $ids AS id
MATCH (e:Entity {id: id})
RETURN e.id AS key, e.embedding AS embedding
