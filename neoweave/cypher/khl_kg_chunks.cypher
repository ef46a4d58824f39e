// KHL-RAG's KG half: the entities nearest the question and the passages mentioning them, the passages whose
// entities are most similar to the question (summed) first.
// @param entities: INTEGER  entities taken (the paper's k = 60)
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param limit: INTEGER  passages returned
{{vector_nodes entity_embedding $entities $embedding}}
WITH node AS e, score
MATCH (c:Chunk)-[:MENTIONS]->(e)
WITH c, count(e) AS entity_count, sum(score) AS entity_score, collect(e.id) AS entity_ids
ORDER BY entity_score DESC, c.id
LIMIT $limit
MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, entity_score AS score, entity_count, entity_ids
ORDER BY score DESC, chunk_id
