// The authored links stored out of documents' sections, before they are re-resolved: a link that comes back with
// the same target, order and context keeps its context embedding; the others are deleted or embedded anew.
// @param doc_ids: LIST  document ids
UNWIND $doc_ids AS doc_id
MATCH (s:Section {doc_id: doc_id})-[l:LINKS_TO]->(t:Section)
WHERE coalesce(l.method, 'authored') = 'authored'
RETURN s.id AS source_id, l.order AS order, t.id AS target_id, l.context AS context,
       l.context_embedding IS NOT NULL AS embedded
