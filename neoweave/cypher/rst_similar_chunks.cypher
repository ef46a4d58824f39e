// rst step, cross-document mode: the processed paragraphs most similar to one new paragraph (any document).
// From the index always (`indexed_vector_nodes`): one search per new paragraph, where an exact one would read every
// chunk vector each time.
// @param k: INTEGER  nearest chunks looked at
// @param embedding: VECTOR  the new paragraph's embedding
// @param signature: STRING  the step's current signature
{{indexed_vector_nodes chunk_embedding $k $embedding}}
WITH node, score, round(score * 1000000) AS rounded_score
WHERE any(entry IN coalesce(node.enriched, []) WHERE entry STARTS WITH $signature)
RETURN node.id AS id, node.doc_id AS doc_id, node.order AS order, node.text AS text, node.embedding AS embedding,
       node.main_idea AS main_idea, score
ORDER BY rounded_score DESC, id
