// The links authored in documents' sections, as stored at ingest (JSON on the section).
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (s:Section {doc_id: doc_id})
RETURN s.id AS section_id, s.doc_id AS doc_id, s.links_json AS links_json
