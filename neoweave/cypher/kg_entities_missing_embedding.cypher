// Entities not embedded yet (new, or their description changed), except fast-method entities of the types the
// kg step leaves without a vector.
// @param limit: INTEGER  batch size
// @param unembedded_types: LIST  entity types of fast-method entities that get no vector
MATCH (e:Entity)
WHERE e.embedding IS NULL AND NOT (e.method = 'fast' AND e.type IN $unembedded_types)
RETURN e.id AS id, e.name AS name, e.description AS description, e.method AS method
LIMIT $limit
