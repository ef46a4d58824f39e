// neoweave import: Tag nodes from an export, MERGE on the key; the exported properties replace the node's,
// vectors stored as the backend's vector type (null leaves the property unset).
// @param rows: LIST  [{key, properties, vectors}]  properties without vectors; vectors {}
UNWIND $rows AS row
MERGE (n:Tag {name: row.key})
SET n = row.properties
