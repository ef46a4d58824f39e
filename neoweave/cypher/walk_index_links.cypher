// Walk index build: the LINKS_TO edges out of one page of sections in key order, with their method and context
// embedding (a section without any gives a row with a null target).
// @param after: STRING  the last section key of the previous page ('' for the first)
// @param limit: INTEGER  sections per page
MATCH (s:Section)
WHERE {{key_after s.id $after}}
WITH s ORDER BY s.id LIMIT $limit
OPTIONAL MATCH (s)-[l:LINKS_TO]->(t:Section)
RETURN s.id AS key, t.id AS target_id, l.method AS method, l.context_embedding AS embedding
ORDER BY key
