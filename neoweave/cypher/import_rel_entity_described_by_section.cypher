// neoweave import: DESCRIBED_BY relationships from Entity to Section, created only while the import marker
// (Meta {id: 'import'}) is at this batch's position: a unit re-sent after a lost reply adds nothing twice.
// @param rows: LIST  [{start, end, properties, vectors}]  properties without vectors; vectors {}
// @param position: INTEGER  records of the import loaded before this batch
MATCH (m:Meta {id: 'import'})
WHERE m.records_loaded = $position
UNWIND $rows AS row
MATCH (a:Entity {id: row.start})
MATCH (b:Section {id: row.end})
CREATE (a)-[r:DESCRIBED_BY]->(b)
SET r = row.properties
