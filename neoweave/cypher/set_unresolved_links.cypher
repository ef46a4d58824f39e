// Links whose target is not in the graph stay on their section as data, never as dangling nodes.
// @param rows: LIST  [{section_id, unresolved_links_json}]
UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
SET s.unresolved_links_json = row.unresolved_links_json
