// Community reports: the relations leaving member entities (the caller keeps those inside a community).
// @param entity_ids: LIST  member entity ids (of a batch of communities)
// @param max_chunks: INTEGER  source chunk ids returned per relation
UNWIND $entity_ids AS entity_id
MATCH (a:Entity {id: entity_id})-[r:RELATED]->(b:Entity)
RETURN a.id AS source_id, b.id AS target_id, r.type AS type, r.description AS description,
       r.weight AS weight, coalesce(r.chunk_ids, [r.chunk_id])[0..$max_chunks] AS chunk_ids
