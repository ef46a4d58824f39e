// Move the absorbed entity's outgoing relations to the survivor, joining evidence lists with the survivor's
// own (a relation between the two would be a self-loop and is dropped with the absorbed entity).
// @param rows: LIST  [{survivor_id, absorbed_id}]
UNWIND $rows AS row
MATCH (a:Entity {id: row.absorbed_id})-[r:RELATED]->(o:Entity)
WHERE o.id <> row.survivor_id
MATCH (s:Entity {id: row.survivor_id})
MERGE (s)-[n:RELATED {type: r.type}]->(o)
ON CREATE SET n.chunk_ids = [], n.chunk_weights = [], n.descriptions = [], n.method = r.method,
              n.created_at = r.created_at, n.source = r.source
SET n.chunk_ids = n.chunk_ids + r.chunk_ids, n.chunk_weights = n.chunk_weights + r.chunk_weights,
    n.descriptions = n.descriptions + r.descriptions, n.weight = coalesce(n.weight, 0.0) + r.weight,
    n.description = coalesce(n.description, r.description)
DELETE r
