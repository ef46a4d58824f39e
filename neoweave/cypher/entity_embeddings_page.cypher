// Every embedded entity's vector, a page at a time in id order (the vector agreement benchmark's exact search over
// the entity index's label).
// @param after: STRING  the last id of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (e:Entity)
WHERE {{key_after e.id $after}} AND e.embedding IS NOT NULL
RETURN e.id AS id, e.embedding AS embedding
ORDER BY e.id
LIMIT $limit
