// Create or replace documents' properties (content hash last-written with their sections and chunks).
// @param rows: LIST  [{id, props}] where props holds every property, id included
UNWIND $rows AS row
MERGE (d:Document {id: row.id})
SET d = row.props
