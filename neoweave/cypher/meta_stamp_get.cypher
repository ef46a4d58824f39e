// The graph's write stamp: a random token every write through a neoweave store replaces (before its first
// statement and after its last), so a structure derived from the graph (the walk index) knows it is current.
// @param id: STRING  key of the Meta node (always "meta")
MATCH (m:Meta {id: $id})
RETURN m.stamp AS stamp
