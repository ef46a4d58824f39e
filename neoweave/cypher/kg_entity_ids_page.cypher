// Every entity id, a page at a time in id order: a run that reads every entity refreshes them a part at a time,
// so no single write holds readers for the whole graph.
// @param after: STRING  the last id of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (e:Entity)
WHERE {{key_after e.id $after}}
RETURN e.id AS key
ORDER BY e.id
LIMIT $limit
