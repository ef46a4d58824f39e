// Walk index build: the LINKS_TO edges out of one page of sections (node_after paging: by internal id on FalkorDB),
// with their method and the fingerprint of their context embedding (see walk_index_chunks; null without one); a
// section without links gives a row with a null target.
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  sections per page
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
MATCH (s:Section)
WHERE {{node_after s $after}}
WITH s ORDER BY {{node_order s}} LIMIT $limit
// the probe bound once, after the page is chosen (before the MATCH, the label was scanned per row)
WITH collect(s) AS page, {{vector $probe}} AS probe
UNWIND page AS s
OPTIONAL MATCH (s)-[l:LINKS_TO]->(t:Section)
RETURN s.id AS key, {{node_order s}} AS cursor, t.id AS target_id, l.method AS method, {{cosine l.context_embedding probe}} AS fingerprint
ORDER BY cursor
