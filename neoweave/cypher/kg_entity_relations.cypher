// kg retriever: for each entity of a frontier, its `per_entity` best relations (either direction), scored by
// the cosine between the question and the entity at the other end plus a bonus for the relation's weight.
// (An entity not embedded yet scores 0. `WHERE o.embedding IS NOT NULL` cost FalkorDB ~0.5 s per query.)
// @param entity_ids: LIST  the frontier
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param per_entity: INTEGER  relations kept per entity
// @param weight_factor: FLOAT  score = cosine + weight_factor * ln(1 + weight)
// @param max_chunks: INTEGER  source chunk ids returned per relation
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[r:RELATED]-(o:Entity)
WITH e, r, o, coalesce({{cosine o.embedding $embedding}}, 0.0) + $weight_factor * log(1 + coalesce(r.weight, 1.0)) AS score
ORDER BY score DESC
WITH e, collect({other_id: o.id, other_name: o.name, source_id: startNode(r).id, type: r.type,
                 description: r.description, weight: r.weight, chunk_ids: r.chunk_ids[0..$max_chunks],
                 score: score})[0..$per_entity] AS best
UNWIND best AS b
RETURN e.id AS entity_id, e.name AS entity_name, b.other_id AS other_id, b.other_name AS other_name,
       b.source_id AS source_id, b.type AS type, b.description AS description, b.weight AS weight,
       b.chunk_ids AS chunk_ids, b.score AS score
