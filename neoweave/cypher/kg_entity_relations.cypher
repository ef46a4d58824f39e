// kg retriever: for each entity of a frontier, its `per_entity` best relations (either direction), scored by
// the cosine between the question and the entity at the other end plus a bonus for the relation's weight.
// (An entity not embedded yet scores 0. `WHERE o.embedding IS NOT NULL` cost FalkorDB ~0.5 s per query.)
// @param entity_ids: LIST  the frontier
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param per_entity: INTEGER  relations kept per entity
// @param weight_factor: FLOAT  score = cosine + weight_factor * ln(1 + weight)
// @param max_chunks: INTEGER  source chunk ids returned per relation
// @param max_degree: INTEGER  entities with more relations (hubs) are not expanded
// @param min_score: FLOAT  relations scoring below it are not returned (kg's hop 2 passes the score a relation
//   needs to enter the facts kept from hop 1; -1e9 keeps all)
// A hub's relations are reached from its other ends only: scoring all 2,636 of one hub cost ~15 ms. Its size
// is the relation count `enrich kg` records (counting the edges here cost ~1 ms per 2,500); an entity
// without one (a graph enriched before the count existed) is expanded.
WITH {{vector $embedding}} AS question_vector
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})
WHERE coalesce(e.relation_count, 0) <= $max_degree
MATCH (e)-[r:RELATED]-(o:Entity)
WITH e, r, o, coalesce({{cosine o.embedding question_vector}}, 0.0) + $weight_factor * log(1 + coalesce(r.weight, 1.0)) AS score
ORDER BY round(score * 1000000) DESC, o.id, startNode(r).id, r.type
WHERE score >= $min_score
// keep references while sorting and slicing: projecting every relation's properties first cost 2x on hubs
WITH e, collect([r, o, score])[0..$per_entity] AS best
UNWIND best AS b
WITH e, b[0] AS r, b[1] AS o, b[2] AS score
RETURN e.id AS entity_id, e.name AS entity_name, o.id AS other_id, o.name AS other_name,
       startNode(r).id AS source_id, r.type AS type, r.description AS description, r.weight AS weight,
       coalesce(r.chunk_ids, [r.chunk_id])[0..$max_chunks] AS chunk_ids, score
