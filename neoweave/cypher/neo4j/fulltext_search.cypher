// BM25 (Lucene) top-k nodes of a full-text index.
// @param index: STRING  full-text index name from graph_schema
// @param query: STRING  escaped query terms (built by the store, never raw user syntax)
// @param k: INTEGER  hits returned
CALL db.index.fulltext.queryNodes($index, $query) YIELD node, score
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS id, score, labels(node) AS labels, properties(node) AS properties
ORDER BY rounded_score DESC, id
LIMIT $k
