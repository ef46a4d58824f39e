// Tags: remove the machine master tags of documents (before they are re-tagged); user edits stay.
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS id
MATCH (d:Document {id: id})-[r:TAGGED]->(:Tag)
WHERE coalesce(r.method, '') <> 'user'
DELETE r
