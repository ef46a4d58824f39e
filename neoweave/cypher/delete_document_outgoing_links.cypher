// Remove the hyperlinks authored in documents about to be rewritten; they are re-resolved afterwards.
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (:Section {doc_id: doc_id})-[l:LINKS_TO]->()
DELETE l
