// neoweave import: Chunk nodes from an export, MERGE on the key; the exported properties replace the node's,
// vectors stored as the backend's vector type (null leaves the property unset).
// @param rows: LIST  [{key, properties, vectors}]  properties without vectors; vectors {embedding, tag_path_embedding, main_idea_embedding, keywords_embedding}
UNWIND $rows AS row
MERGE (n:Chunk {id: row.key})
SET n = row.properties,
    n.embedding = {{vector row.vectors.embedding}},
    n.tag_path_embedding = {{vector row.vectors.tag_path_embedding}},
    n.main_idea_embedding = {{vector row.vectors.main_idea_embedding}},
    n.keywords_embedding = {{vector row.vectors.keywords_embedding}}
