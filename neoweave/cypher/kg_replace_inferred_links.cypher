// Remove the inferred links out of sections (before their recomputed set is created).
// @param section_ids: LIST  sections being recomputed
UNWIND $section_ids AS section_id
MATCH (:Section {id: section_id})-[l:LINKS_TO]->(:Section)
WHERE l.method = 'inferred'
DELETE l
