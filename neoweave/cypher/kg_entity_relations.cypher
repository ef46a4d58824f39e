// kg retriever: for each entity of a frontier, its `per_entity` best relations (either direction), scored by
// the cosine between the question and the entity at the other end plus a bonus for the relation's weight.
// @param entity_ids: LIST  the frontier
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param per_entity: INTEGER  relations kept per entity
// @param weight_factor: FLOAT  score = cosine + weight_factor * ln(1 + weight)
// @param max_chunks: INTEGER  source chunk ids returned per relation
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[r:RELATED]-(o:Entity)
WHERE o.embedding IS NOT NULL
WITH e, r, o, {{cosine o.embedding $embedding}} + $weight_factor * log(1 + coalesce(r.weight, 1.0)) AS score
ORDER BY score DESC
WITH e, collect({r: r, o: o, score: score})[0..$per_entity] AS best
UNWIND best AS b
WITH e, b.r AS r, b.o AS o, b.score AS score
RETURN e.id AS entity_id, e.name AS entity_name, o.id AS other_id, o.name AS other_name,
       startNode(r).id AS source_id, r.type AS type, r.description AS description, r.weight AS weight,
       r.chunk_ids[0..$max_chunks] AS chunk_ids, score
