// Every relationship type of the graph (FalkorDB only): `neoweave backup` then counts each type's relationships, a
// constant-time count in FalkorDB, where `MATCH ()-[r]->()` walks every relationship while writes wait.
CALL db.relationshipTypes() YIELD relationshipType
RETURN relationshipType AS type
ORDER BY type
