// Walk index build: one page of entities in key order with mention count, type, embedding and the sections
// that describe them (DESCRIBED_BY, their home pages).
// @param after: STRING  the last key of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (e:Entity)
WHERE {{key_after e.id $after}}
WITH e ORDER BY e.id LIMIT $limit
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
WITH e, collect(h.id) AS homes
RETURN e.id AS key, e.mention_count AS mentions, e.type AS type, e.embedding AS embedding, homes
ORDER BY key
