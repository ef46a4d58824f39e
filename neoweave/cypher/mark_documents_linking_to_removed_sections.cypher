// Documents whose links point at sections about to disappear must re-resolve those links.
// @param rows: LIST  [{doc_id, keep_section_ids}]; sections of doc_id not in keep_section_ids go away
UNWIND $rows AS row
MATCH (s:Section {doc_id: row.doc_id})
WHERE NOT s.id IN row.keep_section_ids
MATCH (s)<-[:LINKS_TO]-(source:Section)
WITH DISTINCT row, source.doc_id AS doc_id
WHERE doc_id <> row.doc_id
MATCH (d:Document {id: doc_id})
SET d.links_pending = true
