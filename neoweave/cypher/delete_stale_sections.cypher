// Remove sections a document no longer has (kept sections keep the links other documents made to them).
// @param rows: LIST  [{doc_id, keep_section_ids}]
UNWIND $rows AS row
MATCH (s:Section {doc_id: row.doc_id})
WHERE NOT s.id IN row.keep_section_ids
DETACH DELETE s
