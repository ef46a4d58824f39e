// kg retriever: the entities whose embeddings (names; LLM entities with description) are closest to the question.
// @param k: INTEGER  entities returned
// @param embedding: VECTOR  question embedding (L2-normalised)
{{vector_nodes entity_embedding $k $embedding}}
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS id, node.name AS name, node.type AS type, score
ORDER BY rounded_score DESC, id
