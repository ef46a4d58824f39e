// KHL-RAG's KG half: the passages mentioning the question's entities: those of the best-scored entity first,
// then those naming more of the entities, then the closest to the question.
// @param entities: LIST  [{id, score}] the entities most relevant to the question (the paper's k = 60)
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param limit: INTEGER  passages returned
WITH {{vector $embedding}} AS question_vector
UNWIND $entities AS entity
MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: entity.id})
WITH question_vector, c, count(e) AS entity_count, max(entity.score) AS best, collect(e.id) AS entity_ids
WITH c, entity_count, best, entity_ids, {{cosine c.embedding question_vector}} AS similarity
// ties: the score to 1e-6, then the key; sorted by a variable (FalkorDB sorts a RETURN by nothing when its ORDER BY
// repeats an earlier ORDER BY's expression, as the vector search macro and a LIMIT before it would)
WITH c, entity_count, best, entity_ids, similarity, round(similarity * 1000000) AS rounded_similarity
ORDER BY best DESC, entity_count DESC, rounded_similarity DESC, c.id
LIMIT $limit
MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, best AS score, entity_count, entity_ids, similarity
ORDER BY score DESC, entity_count DESC, rounded_similarity DESC, chunk_id
