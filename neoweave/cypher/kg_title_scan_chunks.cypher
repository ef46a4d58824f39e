// Title mentions: a page (node_after paging: by internal id on FalkorDB) of the chunks the kg step extracted, in
// one title-scan state, with the entities their extraction already found (every surface form's origin id:
// 'group:key').
// @param scanned: BOOLEAN  false: chunks never scanned for titles; true: chunks scanned before (for new titles)
// @param prefix: STRING  the kg step's signature prefix ('kg@')
// @param after: ANY  the cursor of the previous page's last chunk (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  page size
MATCH (c:Chunk)
WHERE {{node_after c $after}} AND coalesce(c.titles_scanned, false) = $scanned
  AND any(signature IN coalesce(c.enriched, []) WHERE signature STARTS WITH $prefix)
WITH c
ORDER BY {{node_order c}}
LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(:Entity)
WITH c, collect(m) AS edges
RETURN c.id AS id, {{node_order c}} AS cursor, c.text AS text,
       reduce(acc = [], x IN edges | acc + coalesce(x.origin_ids, [x.origin_id])) AS origin_ids
ORDER BY cursor
