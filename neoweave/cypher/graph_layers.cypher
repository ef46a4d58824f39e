// Which derived layers the graph holds, cheaply (one node of each at most): strategies that compose others
// (pank, router) pick their sub-retrievers by what the enrich steps have built. One row per layer present.
MATCH (e:Entity)
WITH e LIMIT 1
RETURN 'entities' AS layer
UNION ALL
MATCH (c:Community)
WITH c LIMIT 1
RETURN 'communities' AS layer
UNION ALL
MATCH (t:Tag)
WITH t LIMIT 1
RETURN 'tags' AS layer
