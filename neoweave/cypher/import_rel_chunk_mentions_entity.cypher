// neoweave import: MENTIONS relationships from Chunk to Entity, created only while the import marker
// (Meta {id: 'import'}) is at this batch's position: a unit re-sent after a lost reply adds nothing twice.
// @param rows: LIST  [{start, end, properties, vectors}]  properties without vectors; vectors {}
// @param position: INTEGER  records of the import loaded before this batch
MATCH (m:Meta {id: 'import'})
WHERE m.records_loaded = $position
UNWIND $rows AS row
MATCH (a:Chunk {id: row.start})
MATCH (b:Entity {id: row.end})
CREATE (a)-[r:MENTIONS]->(b)
SET r = row.properties
