// Entities not embedded yet (new, or their description changed).
// @param limit: INTEGER  batch size
MATCH (e:Entity)
WHERE e.embedding IS NULL
RETURN e.id AS id, e.name AS name, e.description AS description, e.method AS method
LIMIT $limit
