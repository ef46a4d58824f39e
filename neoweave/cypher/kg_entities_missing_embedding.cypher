// Entities whose name + description has not been embedded yet (new, or description changed).
// @param limit: INTEGER  batch size
MATCH (e:Entity)
WHERE e.embedding IS NULL
RETURN e.id AS id, e.name AS name, e.description AS description
LIMIT $limit
