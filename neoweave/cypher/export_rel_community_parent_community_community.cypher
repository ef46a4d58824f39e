// neoweave export: the PARENT_COMMUNITY relationships of Community nodes given by key, each with its end's key and
// every property; a start node without one gives a row with a null end.
// @param keys: LIST  keys of the start nodes
UNWIND $keys AS key
MATCH (a:Community {id: key})
OPTIONAL MATCH (a)-[r:PARENT_COMMUNITY]->(b:Community)
RETURN a.id AS start_key, b.id AS end_key, properties(r) AS properties
