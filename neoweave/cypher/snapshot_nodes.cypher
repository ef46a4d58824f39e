// Every node with its labels, key (id; a Tag's name) and properties: a graph snapshot, compared by
// neoweave.audit.snapshot (an incrementally maintained graph against one rebuilt from scratch).
MATCH (n)
RETURN labels(n) AS labels, coalesce(n.id, n.name) AS key, properties(n) AS props
