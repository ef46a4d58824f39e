// Create or update sections and attach them to their document.
// @param rows: LIST  [{id, doc_id, props}] where props holds every property, id included
UNWIND $rows AS row
MATCH (d:Document {id: row.doc_id})
MERGE (s:Section {id: row.id})
SET s = row.props
MERGE (d)-[:HAS_SECTION]->(s)
