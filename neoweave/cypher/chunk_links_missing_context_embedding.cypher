// ppr: links out of the sections of frontier chunks whose context has not been embedded yet (embedded once,
// cached on the edge; ppr_expand ranks a chunk's links by it, and an unembedded link would rank last).
// @param chunk_ids: LIST  chunks about to be expanded
// @param link_methods: LIST  LINKS_TO kinds ppr walks: 'authored' (links without a method are authored), 'inferred'
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL AND coalesce(l.method, 'authored') IN $link_methods
RETURN DISTINCT s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context
