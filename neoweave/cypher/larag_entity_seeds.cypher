// LARAG entity seeds: from each home section of a question entity, the chunks closest to the question.
// @param section_ids: LIST  home sections of the question's entities
// @param query_embedding: VECTOR  question embedding
// @param per_section: INTEGER  chunks kept per home section
// @param exclude_chunk_ids: LIST  chunks already in the context
WITH {{vector $query_embedding}} AS question_vector
UNWIND $section_ids AS section_id
MATCH (t:Section {id: section_id})-[:HAS_CHUNK]->(c:Chunk)
WITH t, c, question_vector
WHERE NOT c.id IN $exclude_chunk_ids
WITH t, c, {{cosine c.embedding question_vector}} AS score
ORDER BY score DESC, c.order ASC
WITH t, collect({chunk: c, score: score})[0..$per_section] AS best
UNWIND best AS b
RETURN t.id AS section_id, t.title AS section_title, t.url AS url, b.chunk.id AS chunk_id, b.chunk.text AS text,
       b.chunk.doc_id AS doc_id, b.chunk.token_count AS token_count, b.score AS score
