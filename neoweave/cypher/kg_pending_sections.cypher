// Sections whose inferred links must be recomputed.
// @param limit: INTEGER  at most this many
MATCH (s:Section)
WHERE s.inferred_pending = true
RETURN s.id AS id
LIMIT $limit
