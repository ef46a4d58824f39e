// After a run: an entity whose describing chunk was forgotten takes the context of its first remaining mention.
MATCH (e:Entity)
WHERE e.description IS NULL
MATCH (e)<-[:MENTIONS]-(c:Chunk)
WITH e, min(c.id) AS first_chunk
MATCH (e)<-[m:MENTIONS]-(:Chunk {id: first_chunk})
WITH e, first_chunk, collect(m.context)[0] AS context
SET e.description = context, e.description_chunk = first_chunk
RETURN count(e) AS updated
