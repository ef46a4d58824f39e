// Record that sections' titles were looked for in every chunk scanned so far (re-ingest clears it).
// @param section_ids: LIST  section ids
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})
SET s.titles_scanned = true
