// Store entity embeddings (name + description) for the entity vector index.
// @param rows: LIST  [{id, embedding}]
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.embedding = {{vector row.embedding}}
