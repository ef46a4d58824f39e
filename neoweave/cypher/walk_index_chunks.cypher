// Walk index build: one page of chunks (node_after paging: by internal id on FalkorDB) with their section and a
// fingerprint of their embedding (its cosine to a fixed probe vector: a vector that changed gets another one, so an
// index rebuilt after a write reads only the vectors that changed, neoweave.query.walk_index).
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  page size
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
MATCH (c:Chunk)
WHERE {{node_after c $after}}
WITH c ORDER BY {{node_order c}} LIMIT $limit
// the probe bound once, after the page is chosen (before the MATCH, the label was scanned per row)
WITH collect(c) AS page, {{vector $probe}} AS probe
UNWIND page AS c
OPTIONAL MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS key, {{node_order c}} AS cursor, s.id AS section_id, {{cosine c.embedding probe}} AS fingerprint
ORDER BY cursor
