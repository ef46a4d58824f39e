// LARAG: links out of the frontier sections without a context embedding (the commands that write links embed it
// with them; larag_expand* leave these out, the trace notes them).
// @param section_ids: LIST  sections about to be expanded
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL
RETURN s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context
