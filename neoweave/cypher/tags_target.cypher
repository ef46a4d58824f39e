// Tags: what an id names: a chunk (with its document and tag path) or a document.
// @param id: STRING  document or chunk id
OPTIONAL MATCH (c:Chunk {id: $id})
WITH c
OPTIONAL MATCH (d:Document {id: $id})
RETURN c.doc_id AS chunk_doc_id, c.tag_path AS tag_path, d.id AS doc_id
