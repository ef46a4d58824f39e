// KHL-RAG's main-idea index: top-k paragraphs by cosine similarity of their main idea to the question's.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  embedding of the question's main idea (L2-normalised)
{{vector_nodes chunk_main_idea_embedding $k $embedding}}
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS chunk_id, score
ORDER BY rounded_score DESC, chunk_id
