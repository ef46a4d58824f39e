// Remove Document nodes (after their chunks and sections).
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (d:Document {id: doc_id})
DETACH DELETE d
