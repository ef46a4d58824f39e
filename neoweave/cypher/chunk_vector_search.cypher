// Naive RAG and LARAG seeds: top-k chunks by cosine similarity, with their section and document.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  query embedding (L2-normalised)
{{vector_nodes chunk_embedding $k $embedding}}
MATCH (s:Section)-[:HAS_CHUNK]->(node)
// ties: the score to 1e-6, then the key; sorted by a variable (FalkorDB sorts a RETURN by nothing when its ORDER BY
// repeats an earlier ORDER BY's expression, as the vector search macro and a LIMIT before it would)
WITH node, s, score, round(score * 1000000) AS rounded_score
RETURN node.id AS chunk_id, node.text AS text, node.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, node.token_count AS token_count, score
ORDER BY rounded_score DESC, chunk_id
