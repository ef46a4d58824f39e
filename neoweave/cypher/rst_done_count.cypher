// rst step: how many paragraphs the step has processed with its current signature (the all-pairs count).
// @param signature: STRING  the step's current signature
MATCH (c:Chunk)
WHERE any(entry IN coalesce(c.enriched, []) WHERE entry STARTS WITH $signature)
RETURN count(c) AS count
