// Record whether chunks were scanned for title mentions (extraction resets it: the mentions were replaced).
// @param chunk_ids: LIST  chunk ids
// @param scanned: BOOLEAN  true after a scan; null/false when the chunk is extracted again
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})
SET c.titles_scanned = $scanned
