// Walk index build: the RELATED edges out of one page of entities (node_after paging: by internal id on FalkorDB),
// with their weight and type (an entity without any gives a row with a null other end).
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  entities per page
MATCH (e:Entity)
WHERE {{node_after e $after}}
WITH e ORDER BY {{node_order e}} LIMIT $limit
OPTIONAL MATCH (e)-[r:RELATED]->(o:Entity)
RETURN e.id AS key, {{node_order e}} AS cursor, o.id AS other_id, r.weight AS weight, r.type AS type
ORDER BY cursor
