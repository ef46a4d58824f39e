// neoweave import: LINKS_TO relationships from Section to Section, created only while the import marker
// (Meta {id: 'import'}) is at this batch's position: a unit re-sent after a lost reply adds nothing twice.
// @param rows: LIST  [{start, end, properties, vectors}]  properties without vectors; vectors {context_embedding}
// @param position: INTEGER  records of the import loaded before this batch
MATCH (m:Meta {id: 'import'})
WHERE m.records_loaded = $position
UNWIND $rows AS row
MATCH (a:Section {id: row.start})
MATCH (b:Section {id: row.end})
CREATE (a)-[r:LINKS_TO]->(b)
SET r = row.properties,
    r.context_embedding = {{vector row.vectors.context_embedding}}
