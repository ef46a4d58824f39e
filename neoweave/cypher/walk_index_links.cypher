// Walk index build: the LINKS_TO edges out of one page of sections in key order, with their method and the
// fingerprint of their context embedding (see walk_index_chunks; null without one); a section without links
// gives a row with a null target.
// @param after: STRING  the last section key of the previous page ('' for the first)
// @param limit: INTEGER  sections per page
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
MATCH (s:Section)
WHERE {{key_after s.id $after}}
WITH s ORDER BY s.id LIMIT $limit
// the probe bound once, after the page is chosen (before the MATCH, the label was scanned per row)
WITH collect(s) AS page, {{vector $probe}} AS probe
UNWIND page AS s
OPTIONAL MATCH (s)-[l:LINKS_TO]->(t:Section)
RETURN s.id AS key, t.id AS target_id, l.method AS method, {{cosine l.context_embedding probe}} AS fingerprint
ORDER BY key
