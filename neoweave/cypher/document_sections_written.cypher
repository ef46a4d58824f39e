// A large document written in parts: how many of its sections, in order, are stored with their chunks.
// @param rows: LIST  [{id, sections_written}]
UNWIND $rows AS row
MATCH (d:Document {id: row.id})
SET d.sections_written = row.sections_written
