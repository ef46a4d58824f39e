// Forget the mentions in chunks; entities left without any mention are deleted (with their home and
// relations), and entity descriptions taken from these chunks are cleared (refilled from remaining text).
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
DELETE m
WITH DISTINCT e
OPTIONAL MATCH (e)<-[other:MENTIONS]-(:Chunk)
WITH e, count(other) AS remaining
FOREACH (_ IN CASE WHEN remaining > 0 AND e.description_chunk IN $chunk_ids THEN [1] ELSE [] END |
  SET e.description = null, e.description_chunk = null, e.embedding = null)
WITH e, remaining
WHERE remaining = 0
DETACH DELETE e
