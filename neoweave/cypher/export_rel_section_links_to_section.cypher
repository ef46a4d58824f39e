// neoweave export: the LINKS_TO relationships of Section nodes given by key, each with its end's key and
// every property; a start node without one gives a row with a null end.
// @param keys: LIST  keys of the start nodes
UNWIND $keys AS key
MATCH (a:Section {id: key})
OPTIONAL MATCH (a)-[r:LINKS_TO]->(b:Section)
RETURN a.id AS start_key, b.id AS end_key, properties(r) AS properties
