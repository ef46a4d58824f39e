// ppr: links out of the sections of frontier chunks whose context has not been embedded yet (embedded once,
// cached on the edge; ppr_expand ranks a chunk's links by it, and an unembedded link would rank last).
// @param chunk_ids: LIST  chunks about to be expanded
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL
RETURN DISTINCT s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context
