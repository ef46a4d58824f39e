// For link targets: each page's anchors (element id -> section id) and its first section.
// @param urls: LIST  page URLs without fragment
UNWIND $urls AS url
MATCH (d:Document {url: url})
RETURN d.url AS url, d.anchors_json AS anchors_json, d.first_section_id AS first_section_id
