// Orion-RAG's tag index: top-k chunks by cosine similarity of their tag path to the query.
// @param k: INTEGER  chunks to return
// @param embedding: VECTOR  query embedding (L2-normalised)
{{vector_nodes chunk_tag_path_embedding $k $embedding}}
RETURN node.id AS chunk_id, score
ORDER BY round(score * 1000000) DESC, chunk_id
