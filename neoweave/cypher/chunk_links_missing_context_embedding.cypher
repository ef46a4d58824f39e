// ppr: links out of the sections of frontier chunks without a context embedding (the commands that write links
// embed it with them; ppr_expand ranks a chunk's links by it and leaves these out, the trace notes them).
// @param chunk_ids: LIST  chunks about to be expanded
// @param link_methods: LIST  LINKS_TO kinds ppr walks: 'authored' (links without a method are authored), 'inferred'
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL AND coalesce(l.method, 'authored') IN $link_methods
RETURN DISTINCT s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context
