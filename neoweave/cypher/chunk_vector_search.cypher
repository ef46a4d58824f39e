// Naive RAG and LARAG seeds: top-k chunks by cosine similarity, with their section and document.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  query embedding (L2-normalised)
{{vector_nodes chunk_embedding $k $embedding}}
MATCH (s:Section)-[:HAS_CHUNK]->(node)
RETURN node.id AS chunk_id, node.text AS text, node.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, node.token_count AS token_count, score
ORDER BY round(score * 1000000) DESC, chunk_id
