// Forget the links inferred from mentions in chunks; their sections are recomputed by the kg step.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (s:Section)-[l:LINKS_TO {chunk_id: chunk_id}]->(:Section)
WHERE l.method = 'inferred'
SET s.inferred_pending = true
DELETE l
