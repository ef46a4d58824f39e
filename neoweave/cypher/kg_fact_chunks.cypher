// kg retriever: chunks that facts were read from, with their place and similarity to the question.
// @param chunk_ids: LIST  candidate chunk ids
// @param embedding: VECTOR  question embedding (L2-normalised)
WITH {{vector $embedding}} AS question_vector
UNWIND $chunk_ids AS chunk_id
MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk {id: chunk_id})
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, {{cosine c.embedding question_vector}} AS score
