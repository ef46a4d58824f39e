// Ids of the chunks of documents (what enrichers derived from them is forgotten before they are rewritten).
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (c:Chunk {doc_id: doc_id})
RETURN c.id AS id
