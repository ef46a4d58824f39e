// neoweave export: the keys of one page of Meta nodes, in the order the store pages a label cheaply
// (node_after paging: FalkorDB's internal ids, Neo4j's key index); the export sorts them all and then reads the
// nodes and their relationships by key (export_node_*, export_rel_*), so that no page scans the label.
// @param after: ANY  the cursor of the previous page's last node (`GraphStore.node_page_start` for the first)
// @param limit: INTEGER  page size
MATCH (n:Meta)
WHERE {{node_after n $after}}
RETURN n.id AS key, {{node_order n}} AS cursor
ORDER BY cursor
LIMIT $limit
