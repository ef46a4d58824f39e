// rst step: remove what the step derived from chunks (features, and every RST edge they are part of) before
// they are re-processed or deleted.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
SET c.main_idea = null, c.keywords = null, c.paragraph_type = null, c.type_reason = null, c.rst_method = null,
    c.main_idea_embedding = null, c.keywords_embedding = null
WITH c
OPTIONAL MATCH (c)-[r:RST]-(:Chunk)
DELETE r
