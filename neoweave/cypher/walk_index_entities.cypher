// Walk index build: one page of entities (node_after paging: by internal id on FalkorDB) with mention and relation
// counts, type, the fingerprint of their embedding (see walk_index_chunks; null without one) and the sections that
// describe them (DESCRIBED_BY).
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  page size
// @param probe: VECTOR  the fixed unit vector fingerprints are taken against
MATCH (e:Entity)
WHERE {{node_after e $after}}
WITH e ORDER BY {{node_order e}} LIMIT $limit
// the probe bound once, after the page is chosen (before the MATCH, the label was scanned per row)
WITH collect(e) AS page, {{vector $probe}} AS probe
UNWIND page AS e
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
WITH e, probe, collect(h.id) AS homes
RETURN e.id AS key, {{node_order e}} AS cursor, e.mention_count AS mentions, e.relation_count AS relations, e.type AS type,
       {{cosine e.embedding probe}} AS fingerprint, homes
ORDER BY cursor
