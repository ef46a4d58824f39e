// neoweave export: the TAGGED relationships of Document nodes given by key, each with its end's key and
// every property; a start node without one gives a row with a null end.
// @param keys: LIST  keys of the start nodes
UNWIND $keys AS key
MATCH (a:Document {id: key})
OPTIONAL MATCH (a)-[r:TAGGED]->(b:Tag)
RETURN a.id AS start_key, b.name AS end_key, properties(r) AS properties
