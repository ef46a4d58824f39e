// (:Chunk)-[:MENTIONS]->(:Entity), one edge per chunk, entity and original surface entity (origin_id), so a
// merge can be undone exactly.
// @param rows: LIST  [{chunk_id, entity_id, origin_id, count, name, context, method}]
// @param source: STRING  the step signature
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:Entity {id: row.entity_id})
MERGE (c)-[m:MENTIONS {origin_id: row.origin_id}]->(e)
SET m.count = row.count, m.name = row.name, m.context = row.context, m.method = row.method, m.source = $source,
    m.created_at = $now
