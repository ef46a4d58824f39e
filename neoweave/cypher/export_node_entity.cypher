// neoweave export: Entity nodes by key (export_keys_* lists them; the export sorts them), each with every
// property (vectors as float lists). One statement per label (Cypher cannot take a label as a parameter);
// neoweave.kb.transfer names them.
// @param keys: LIST  keys of the nodes to read
UNWIND $keys AS key
MATCH (n:Entity {id: key})
RETURN n.id AS key, properties(n) AS properties
