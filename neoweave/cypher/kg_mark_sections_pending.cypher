// Sections whose inferred links must be recomputed: those holding the given chunks.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (s:Section)-[:HAS_CHUNK]->(:Chunk {id: chunk_id})
SET s.inferred_pending = true
