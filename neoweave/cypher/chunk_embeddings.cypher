// The stored text embeddings of chunks (the tags step ranks a chunk's keyphrases against it).
// @param ids: LIST  chunk ids
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
RETURN c.id AS id, c.embedding AS embedding
