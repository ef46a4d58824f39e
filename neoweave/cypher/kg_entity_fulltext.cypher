// kg retriever: entities whose names or aliases share words with the question (BM25 over entity_name).
// @param query: STRING  the store's any-word query for the question's words (never raw user syntax)
// @param k: INTEGER  hits returned
{{fulltext_nodes entity_name $query}}
RETURN node.id AS id, node.name AS name, node.aliases AS aliases, score
ORDER BY score DESC
LIMIT $k
