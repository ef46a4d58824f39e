// Forget the links inferred from mentions in chunks; their sections are recomputed by the kg step.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (s:Section)-[:HAS_CHUNK]->(:Chunk {id: chunk_id})
MATCH (s)-[l:LINKS_TO]->(:Section)
WHERE l.method = 'inferred' AND l.chunk_id = chunk_id
SET s.inferred_pending = true
DELETE l
