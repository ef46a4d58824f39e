// Title mentions: a page (node_after paging: by internal id on FalkorDB) of the chunks the kg step extracted, in
// one title-scan state, with the entities their extraction already found (every surface form's origin id:
// 'group:key').
// The forms as parallel lists over the chunk's edges: origin ids, sources (a title mention's ends with ':titles')
// and counts.
// @param scanned: BOOLEAN  false: chunks never scanned for titles; true: chunks scanned before (for new titles)
// @param prefix: STRING  the kg step's signature prefix ('kg@')
// @param after: ANY  the cursor of the previous page's last chunk (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  page size
// @param anchors: LIST  null, or words one of which a chunk's text must contain (`Gazetteer.anchors`: the
//                       server drops the chunks that cannot hold a match instead of sending their texts)
MATCH (c:Chunk)
WHERE {{node_after c $after}} AND coalesce(c.titles_scanned, false) = $scanned
  AND any(signature IN coalesce(c.enriched, []) WHERE signature STARTS WITH $prefix)
  AND ($anchors IS NULL OR any(anchor IN $anchors WHERE c.text CONTAINS anchor))
WITH c
ORDER BY {{node_order c}}
LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(:Entity)
WITH c, collect(m) AS edges
RETURN c.id AS id, {{node_order c}} AS cursor, c.text AS text,
       reduce(acc = [], x IN edges | acc + coalesce(x.origin_ids, [x.origin_id])) AS origin_ids,
       reduce(acc = [], x IN edges | acc + coalesce(x.sources, [x.source])) AS sources,
       reduce(acc = [], x IN edges | acc + coalesce(x.counts, [x.count])) AS counts
ORDER BY cursor
