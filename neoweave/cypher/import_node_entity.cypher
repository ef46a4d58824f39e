// neoweave import: Entity nodes from an export, MERGE on the key; the exported properties replace the node's,
// vectors stored as the backend's vector type (null leaves the property unset).
// @param rows: LIST  [{key, properties, vectors}]  properties without vectors; vectors {embedding}
UNWIND $rows AS row
MERGE (n:Entity:__Entity__ {id: row.key})
SET n = row.properties,
    n.embedding = {{vector row.vectors.embedding}}
