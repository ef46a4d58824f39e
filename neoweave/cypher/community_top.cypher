// `neoweave communities`: communities of one level (or all: level -1), highest rated first.
// @param level: INTEGER  the level, or -1 for every level
// @param limit: INTEGER  rows returned
MATCH (c:Community)
WITH c
WHERE $level < 0 OR c.level = $level
RETURN c.id AS id, c.level AS level, c.size AS size, c.children AS children, c.rating AS rating, c.title AS title
ORDER BY rating DESC, size DESC, id ASC
LIMIT $limit
