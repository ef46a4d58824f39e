// neoweave export: the HAS_SECTION relationships of one page of Document nodes in key order, each with its end's key and
// every property, by start key; a start node without one gives a row with a null end (the cursor moves past it).
// @param after: STRING  the last start key of the previous page ('' for the first)
// @param limit: INTEGER  start nodes per page
MATCH (a:Document)
WHERE {{key_after a.id $after}}
WITH a ORDER BY a.id LIMIT $limit
OPTIONAL MATCH (a)-[r:HAS_SECTION]->(b:Section)
RETURN a.id AS start_key, b.id AS end_key, properties(r) AS properties
ORDER BY start_key
