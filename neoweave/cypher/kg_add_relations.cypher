// Relation evidence from chunks: one RELATED edge per (source, target, type) holding parallel lists of the
// supporting chunk ids, weights and descriptions; weight is their sum, description the first.
// @param rows: LIST  [{source_id, target_id, type, chunk_id, weight, description, method}]
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (a:Entity {id: row.source_id})
MATCH (b:Entity {id: row.target_id})
MERGE (a)-[r:RELATED {type: row.type}]->(b)
ON CREATE SET r.chunk_ids = [], r.chunk_weights = [], r.descriptions = [], r.method = row.method,
              r.created_at = $now, r.source = 'kg'
SET r.chunk_ids = r.chunk_ids + row.chunk_id, r.chunk_weights = r.chunk_weights + row.weight,
    r.descriptions = r.descriptions + row.description, r.weight = coalesce(r.weight, 0.0) + row.weight,
    r.description = coalesce(r.description, row.description)
