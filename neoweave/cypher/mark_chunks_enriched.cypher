// Record that a step processed chunks: replace the step's previous signature in the chunk's list.
// @param rows: LIST  [{id, prefix, signature}]  prefix = 'step@' (drops any earlier signature of the step)
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
SET c.enriched = [entry IN coalesce(c.enriched, []) WHERE NOT entry STARTS WITH row.prefix] + [row.signature]
