// Communities: the entity graph Leiden runs on, every RELATED edge with its weight (summed over its evidence).
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
RETURN a.id AS source, b.id AS target, r.weight AS weight
