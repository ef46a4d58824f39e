// The links stored out of sections, before their authored links are re-resolved or their inferred links
// recomputed: a link that comes back with the same target, order and context keeps its context embedding, the
// others are deleted or embedded anew; a pair of sections the author linked gets no inferred link.
// @param section_ids: LIST  sections being recomputed
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[l:LINKS_TO]->(t:Section)
RETURN s.id AS source_id, l.order AS order, t.id AS target_id, l.context AS context,
       l.context_embedding IS NOT NULL AS embedded, coalesce(l.method, 'authored') AS method
