// neoweave import: HAS_CHUNK relationships from Section to Chunk, created only while the import marker
// (Meta {id: 'import'}) is at this batch's position: a unit re-sent after a lost reply adds nothing twice.
// @param rows: LIST  [{start, end, properties, vectors}]  properties without vectors; vectors {}
// @param position: INTEGER  records of the import loaded before this batch
MATCH (m:Meta {id: 'import'})
WHERE m.records_loaded = $position
UNWIND $rows AS row
MATCH (a:Section {id: row.start})
MATCH (b:Chunk {id: row.end})
CREATE (a)-[r:HAS_CHUNK]->(b)
SET r = row.properties
