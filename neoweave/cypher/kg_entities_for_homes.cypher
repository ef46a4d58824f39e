// Every entity with its names and current homes (the kg step recomputes homes from section titles).
MATCH (e:Entity)
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN e.id AS id, e.key AS key, e.aliases AS aliases, collect(h.id) AS homes
