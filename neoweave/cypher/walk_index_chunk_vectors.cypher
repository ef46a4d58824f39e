// Walk index build: the embeddings of chunks the index does not hold yet (new, or changed since it was built).
// @param ids: LIST  chunk ids
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS key, c.embedding AS embedding
