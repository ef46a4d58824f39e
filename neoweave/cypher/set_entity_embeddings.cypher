// Store entity embeddings (see enrich/kg.py entity_text) for the entity vector index.
// @param rows: LIST  [{id, embedding}]
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.embedding = {{vector row.embedding}}
