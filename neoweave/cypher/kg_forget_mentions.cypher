// Forget the mentions in chunks; entities left without any mention are deleted (with their home and
// relations). Run after kg_forget_descriptions.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
DELETE m
WITH DISTINCT e
OPTIONAL MATCH (e)<-[other:MENTIONS]-(:Chunk)
WITH e, count(other) AS remaining
WHERE remaining = 0
DETACH DELETE e
