// Remove the authored hyperlinks of documents before re-resolving them (inferred links are the kg step's).
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (:Section {doc_id: doc_id})-[l:LINKS_TO]->()
WHERE coalesce(l.method, 'authored') = 'authored'
DELETE l
