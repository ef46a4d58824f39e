// After a run: mention counts (for inverse-frequency weighting) and descriptions refilled from a remaining
// mention's context where the describing chunk was forgotten. Entities with nothing to change are not
// written: on FalkorDB every write to a vector-indexed node costs a vector re-insert (and an index rebuild).
MATCH (e:Entity)
OPTIONAL MATCH (e)<-[m:MENTIONS]-(c:Chunk)
WITH e, sum(m.count) AS mentions, min(c.id) AS first_chunk
WHERE coalesce(e.mention_count, -1) <> mentions OR e.description IS NULL
SET e.mention_count = mentions
WITH e, first_chunk
WHERE e.description IS NULL AND first_chunk IS NOT NULL
MATCH (e)<-[m:MENTIONS]-(:Chunk {id: first_chunk})
WITH e, first_chunk, collect(m.context)[0] AS context
SET e.description = context, e.description_chunk = first_chunk
