// Walk index build: the MENTIONS of one page of chunks (node_after paging: by internal id on FalkorDB), one row
// per chunk (a chunk without any has empty lists) with its entities as their page cursors (node_order: the
// internal id on FalkorDB, which the entities' read returns too; a number travels and decodes faster than an id
// string: 0.9 s against 1.9 s for the Python docs' 325k mentions) and the counts in the same order (1 where the
// graph has none; a null entity is left out of both lists).
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  chunks per page
MATCH (c:Chunk)
WHERE {{node_after c $after}}
WITH c ORDER BY {{node_order c}} LIMIT $limit
OPTIONAL MATCH (c)-[m:MENTIONS]->(e:Entity)
WITH c, collect({{node_order e}}) AS entities,
     collect(CASE WHEN e IS NULL THEN null ELSE coalesce(m.count, 1) END) AS counts
RETURN c.id AS key, {{node_order c}} AS cursor, entities, counts
ORDER BY cursor
