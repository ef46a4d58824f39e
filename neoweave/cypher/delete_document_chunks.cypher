// Remove the chunks of documents about to be rewritten (or deleted), with every edge on them.
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (c:Chunk {doc_id: doc_id})
DETACH DELETE c
