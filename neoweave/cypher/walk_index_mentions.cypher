// Walk index build: the MENTIONS of one page of chunks (node_after paging: by internal id on FalkorDB), with the
// mention count (a chunk without any gives a row with a null entity, so the page cursor moves past it).
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  chunks per page
MATCH (c:Chunk)
WHERE {{node_after c $after}}
WITH c ORDER BY {{node_order c}} LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
RETURN c.id AS key, {{node_order c}} AS cursor, e.id AS entity_id, m.count AS count
ORDER BY cursor
