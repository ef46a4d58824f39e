// Remove all sections of documents being deleted (their chunks are removed first).
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (s:Section {doc_id: doc_id})
DETACH DELETE s
