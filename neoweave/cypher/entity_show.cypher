// One entity by id, or the entities whose key (normalised name) matches: properties, home, counts.
// @param id: STRING  entity id (or '' to look up by key)
// @param key: STRING  normalised name
MATCH (e:Entity)
WHERE e.id = $id OR e.key = $key
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN e.id AS id, e.name AS name, e.type AS type, e.key AS key, e.description AS description,
       e.aliases AS aliases, e.method AS method, e.mention_count AS mentions, collect(h.id) AS homes
LIMIT 20
