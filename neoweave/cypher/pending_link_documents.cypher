// Documents whose outgoing links still have to be resolved (written, or a target changed).
// @param limit: INTEGER  at most this many
MATCH (d:Document)
WHERE d.links_pending = true
RETURN d.id AS id
ORDER BY id
LIMIT $limit
