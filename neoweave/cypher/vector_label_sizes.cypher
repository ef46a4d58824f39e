// Node counts of the labels vector search reads (`{{vector_nodes}}`): while a label has at most
// `GraphStore.exact_search_below` nodes, a search compares every vector instead of asking the index (exact, and the
// same on every copy of the graph). A count of one label each; a label missing here is always searched by index.
MATCH (c:Chunk)
RETURN 'Chunk' AS label, count(c) AS nodes
UNION ALL
MATCH (e:Entity)
RETURN 'Entity' AS label, count(e) AS nodes
