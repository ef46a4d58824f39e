// Every node label of the graph (FalkorDB only): `neoweave backup` then counts each label's nodes, a constant-time
// count in FalkorDB, where counting by `labels(n)` scans every node while writes wait for the snapshot.
CALL db.labels() YIELD label
RETURN label
ORDER BY label
