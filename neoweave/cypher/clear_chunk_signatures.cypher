// Make a step process chunks again (after an unmerge, or to force a re-run).
// @param ids: LIST  chunk ids
// @param prefix: STRING  'step@'
UNWIND $ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})
SET c.enriched = [entry IN coalesce(c.enriched, []) WHERE NOT entry STARTS WITH $prefix]
