// Community local search: chunks mentioning the question's entities, those mentioning more of them first,
// then the closest to the question.
// @param entity_ids: LIST  the question's entities
// @param embedding: VECTOR  question embedding
// @param limit: INTEGER  chunks returned
WITH {{vector $embedding}} AS question_vector
UNWIND $entity_ids AS entity_id
MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: entity_id})
WITH question_vector, c, collect(e.id) AS entity_ids
WITH c, entity_ids, {{cosine c.embedding question_vector}} AS score
ORDER BY size(entity_ids) DESC, round(score * 1000000) DESC, c.id
LIMIT $limit
MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, score, entity_ids
