// Top-k nodes of a vector index with an optional exact-match property filter.
// Neo4j's cosine score is (1 + cos) / 2; it is mapped back to cos so both backends agree.
// @param index: STRING  vector index name from graph_schema
// @param fetch_k: INTEGER  neighbours fetched from the index (over-fetched when filtering)
// @param k: INTEGER  hits returned
// @param embedding: VECTOR  query vector (L2-normalised)
// @param filter: MAP  property -> required value; empty map for no filter
CALL db.index.vector.queryNodes($index, $fetch_k, $embedding) YIELD node, score
// ($filter is bound to a variable first: FalkorDB mis-evaluates $param[key] inside a list predicate after WITH)
WITH node, 2 * score - 1 AS score, $filter AS filter
WHERE all(prop IN keys(filter) WHERE node[prop] = filter[prop])
WITH node, score, round(score * 1000000) AS rounded_score
RETURN node.id AS id, score, labels(node) AS labels, properties(node) AS properties
ORDER BY rounded_score DESC, id
LIMIT $k
