// The text and place of chunks, by id (enrichment input).
// @param ids: LIST  chunk ids
UNWIND $ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})
RETURN c.id AS id, c.text AS text, c.section_id AS section_id, c.doc_id AS doc_id, c.order AS order
