// Entity linking without the full-text branch of kg_link_entities: entities whose normalised name is one of
// the question's word n-grams (with their homes) and the nearest entity vectors. Column `via` is 'name' or
// 'vector', the columns as in kg_link_entities.
// @param keys: LIST  normalised n-grams of the question
// @param entity_k: INTEGER  nearest entity vectors returned (at least 1)
// @param embedding: VECTOR  question embedding
UNWIND $keys AS name_key
MATCH (e:Entity {key: name_key})
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN 'name' AS via, name_key AS matched, e.id AS id, e.name AS name, e.aliases AS aliases,
       coalesce(e.mention_count, 0) AS mentions, collect(h.id) AS homes, 1.0 AS score
UNION ALL
{{vector_nodes entity_embedding $entity_k $embedding}}
RETURN 'vector' AS via, null AS matched, node.id AS id, node.name AS name, [] AS aliases, 0 AS mentions,
       [] AS homes, score
