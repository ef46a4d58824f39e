// Orion-RAG's tag index: top-k chunks by cosine similarity of their tag path to the query.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  query embedding (L2-normalised)
{{vector_nodes chunk_tag_path_embedding $k $embedding}}
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS chunk_id, score
ORDER BY rounded_score DESC, chunk_id
