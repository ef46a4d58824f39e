// Title mentions: a page (by id) of the chunks the kg step extracted, in one title-scan state, with the
// entities their extraction already found (every surface form's origin id: 'group:key').
// @param scanned: BOOLEAN  false: chunks never scanned for titles; true: chunks scanned before (for new titles)
// @param prefix: STRING  the kg step's signature prefix ('kg@')
// @param after: STRING  the last chunk id of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (c:Chunk)
WHERE {{key_after c.id $after}} AND coalesce(c.titles_scanned, false) = $scanned
  AND any(signature IN coalesce(c.enriched, []) WHERE signature STARTS WITH $prefix)
WITH c
ORDER BY c.id
LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(:Entity)
WITH c, collect(m) AS edges
RETURN c.id AS id, c.text AS text,
       reduce(acc = [], x IN edges | acc + coalesce(x.origin_ids, [x.origin_id])) AS origin_ids
ORDER BY id
