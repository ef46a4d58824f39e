// Every relationship with its type, its ends' first labels and keys (id; a Tag's name) and its properties:
// the other half of a graph snapshot (neoweave.audit.snapshot).
MATCH (a)-[r]->(b)
RETURN type(r) AS type, labels(a)[0] AS start_label, coalesce(a.id, a.name) AS start_key,
       labels(b)[0] AS end_label, coalesce(b.id, b.name) AS end_key, properties(r) AS props
