// Inferred links of these sections are up to date.
// @param section_ids: LIST  sections recomputed
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})
SET s.inferred_pending = false
