// kg retriever over the walk index: the texts of the relations kept as facts, each named by its key (one RELATED
// edge per source, target and type, as `kg_add_relations` writes them; the walk index chose and scored them).
// @param rows: LIST  [{source_id, target_id, type}]  (type '' for an edge without one)
// @param max_chunks: INTEGER  source chunk ids returned per relation
UNWIND $rows AS row
MATCH (a:Entity {id: row.source_id})-[r:RELATED]->(b:Entity {id: row.target_id})
WHERE coalesce(r.type, '') = row.type
RETURN a.id AS source_id, a.name AS source_name, b.id AS target_id, b.name AS target_name, r.type AS type,
       r.description AS description, r.weight AS weight, coalesce(r.chunk_ids, [r.chunk_id])[0..$max_chunks] AS chunk_ids
