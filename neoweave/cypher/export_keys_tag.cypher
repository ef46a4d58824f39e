// neoweave export: the keys of one page of Tag nodes in key order (few: a label scan a page is cheap; node_after
// paging reads Neo4j's `id`, which tags do not have); the export sorts them all and then reads the nodes and their
// relationships by key (export_node_*, export_rel_*).
// @param after: STRING  the last key of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (n:Tag)
WHERE {{key_after n.name $after}}
RETURN n.name AS key, n.name AS cursor
ORDER BY key
LIMIT $limit
