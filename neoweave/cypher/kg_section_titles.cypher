// Titles that can name an entity: every section's title and its document's title and first section, and
// whether the section's titles were already looked for in the chunks (title mentions).
MATCH (d:Document)-[:HAS_SECTION]->(s:Section)
RETURN s.id AS section_id, s.title AS title, d.title AS doc_title, d.first_section_id AS first_section_id,
       s.order AS order, coalesce(s.titles_scanned, false) AS titles_scanned
