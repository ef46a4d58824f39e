// KHL-RAG's keyword index: top-k paragraphs by cosine similarity of their keywords' embedding to the question's.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  embedding of the question's keywords (L2-normalised)
{{vector_nodes chunk_keywords_embedding $k $embedding}}
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS chunk_id, score
ORDER BY rounded_score DESC, chunk_id
