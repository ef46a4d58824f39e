// neoweave export: one page of Section nodes in key order, each with every property (vectors as float lists).
// One statement per label (Cypher cannot take a label as a parameter); neoweave.kb.transfer names them.
// @param after: STRING  the last key of the previous page ('' for the first)
// @param limit: INTEGER  page size
MATCH (n:Section)
WHERE {{key_after n.id $after}}
RETURN n.id AS key, properties(n) AS properties
ORDER BY key
LIMIT $limit
