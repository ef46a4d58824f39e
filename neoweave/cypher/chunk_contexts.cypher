// Chunks by id with their place and similarity to the question: the context rows of chunks a strategy chose
// by other means than vector search (kg: the facts' source chunks; ppr: the chunks the walk ranked highest).
// @param chunk_ids: LIST  chunk ids
// @param embedding: VECTOR  question embedding (L2-normalised)
WITH {{vector $embedding}} AS question_vector
UNWIND $chunk_ids AS chunk_id
MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk {id: chunk_id})
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, {{cosine c.embedding question_vector}} AS score
