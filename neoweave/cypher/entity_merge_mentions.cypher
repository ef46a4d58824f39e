// Move the absorbed entity's mentions to the survivor (origin_id kept: that is what an unmerge moves back).
// @param rows: LIST  [{survivor_id, absorbed_id}]
UNWIND $rows AS row
MATCH (a:Entity {id: row.absorbed_id})<-[m:MENTIONS]-(c:Chunk)
MATCH (s:Entity {id: row.survivor_id})
MERGE (c)-[moved:MENTIONS {origin_id: m.origin_id}]->(s)
SET moved.count = m.count, moved.name = m.name, moved.context = m.context, moved.method = m.method,
    moved.source = m.source, moved.created_at = m.created_at
DELETE m
