// Walk index build: the RELATED edges out of one page of entities in key order, with their weight and type (an
// entity without any gives a row with a null other end).
// @param after: STRING  the last entity key of the previous page ('' for the first)
// @param limit: INTEGER  entities per page
MATCH (e:Entity)
WHERE {{key_after e.id $after}}
WITH e ORDER BY e.id LIMIT $limit
OPTIONAL MATCH (e)-[r:RELATED]->(o:Entity)
RETURN e.id AS key, o.id AS other_id, r.weight AS weight, r.type AS type
ORDER BY key
