// The graph's schema as stored: every (label)-[type]->(label) pattern with its number of relationships (the
// declared schema is neoweave/graph_schema; this reads what is actually there).
MATCH (a)-[r]->(b)
RETURN [l IN labels(a) WHERE l <> '__Entity__'][0] AS source, type(r) AS type,
       [l IN labels(b) WHERE l <> '__Entity__'][0] AS target, count(*) AS relationships
ORDER BY relationships DESC, source, type, target
