// Orion-RAG's fine ranking: every candidate's cosine similarity to the query, by its text and by its tag path
// (null for a chunk without a tag path), with what the context needs.
// @param ids: LIST  candidate chunk ids
// @param embedding: VECTOR  query embedding (L2-normalised)
WITH {{vector $embedding}} AS query_vector
UNWIND $ids AS id
MATCH (s:Section)-[:HAS_CHUNK]->(c:Chunk {id: id})
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, c.tag_path AS tag_path,
       {{cosine c.embedding query_vector}} AS semantic,
       CASE WHEN c.tag_path_embedding IS NULL THEN null ELSE {{cosine c.tag_path_embedding query_vector}} END AS tag
