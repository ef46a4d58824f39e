// ppr, one hop of the walk's subgraph: the edges around a frontier of entities and chunks, at most $per_node
// per node and edge kind (those closest to the question, or the heaviest), so that a hub entity or a much-linked
// section adds no more rows than any other node. The walk's nodes are entities and chunks; an edge through a
// section is given between chunks: DESCRIBED_BY from an entity to the chunks of its home section, LINKS_TO from a
// chunk to the chunk closest to the question of each section its section links to (outgoing links only: a
// much-linked section has thousands of incoming ones; a link without a context embedding is left out, the strategy
// notes it in its trace). Hub entities (more than $max_mentions mentions) take no
// part: reading their thousands of mentions would cost more than any other step, and each says little.
// One row per edge in its stored direction (start -[type]-> end), with the sections it passes through
// (`via_start`, `via_end`), each end's cosine to the question (null for an entity without an embedding) and,
// for an entity end, its mention count and type (`entity_id`, `mentions`, `entity_type`).
// @param entity_ids: LIST  frontier entities
// @param chunk_ids: LIST  frontier chunks
// @param embedding: VECTOR  question embedding (L2-normalised)
// @param per_node: INTEGER  edges kept per frontier node and edge kind
// @param max_mentions: INTEGER  entities mentioned more often are hubs: neither expanded nor reached
// @param link_methods: LIST  LINKS_TO kinds walked: 'authored' (links without a method are authored), 'inferred'
WITH {{vector $embedding}} AS question_vector
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(c:Chunk)
WHERE coalesce(e.mention_count, 0) <= $max_mentions
WITH e, c, {{cosine c.embedding question_vector}} AS score, question_vector
ORDER BY score DESC, c.id
WITH e, collect([c.id, score])[0..$per_node] AS best, question_vector
WITH e, best, {{cosine e.embedding question_vector}} AS e_score
UNWIND best AS b
RETURN b[0] AS start_id, 'Chunk' AS start_label, 'MENTIONS' AS type, e.id AS end_id, 'Entity' AS end_label,
       null AS via_start, null AS via_end, b[1] AS start_score, e_score AS end_score,
       1.0 AS weight, e.id AS entity_id, e.mention_count AS mentions, e.type AS entity_type
UNION ALL
WITH {{vector $embedding}} AS question_vector
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[:DESCRIBED_BY]->(h:Section)-[:HAS_CHUNK]->(c:Chunk)
WITH e, h, c, {{cosine c.embedding question_vector}} AS score, question_vector
ORDER BY score DESC, c.id
WITH e, collect([c.id, score, h.id])[0..$per_node] AS best, question_vector
WITH e, best, {{cosine e.embedding question_vector}} AS e_score
UNWIND best AS b
RETURN e.id AS start_id, 'Entity' AS start_label, 'DESCRIBED_BY' AS type, b[0] AS end_id, 'Chunk' AS end_label,
       null AS via_start, b[2] AS via_end, e_score AS start_score, b[1] AS end_score,
       1.0 AS weight, e.id AS entity_id, e.mention_count AS mentions, e.type AS entity_type
UNION ALL
WITH {{vector $embedding}} AS question_vector
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[r:RELATED]-(o:Entity)
WHERE coalesce(e.mention_count, 0) <= $max_mentions AND coalesce(o.mention_count, 0) <= $max_mentions
WITH e, r, o, question_vector
// ties by the other end, then by the start (two relations of a pair in opposite directions: one order, the index's)
ORDER BY coalesce(r.weight, 1.0) DESC, o.id, startNode(r).id
WITH e, collect([r, o])[0..$per_node] AS best, question_vector
WITH e, best, {{cosine e.embedding question_vector}} AS e_score, question_vector
UNWIND best AS b
WITH e, b[0] AS r, b[1] AS o, e_score, {{cosine b[1].embedding question_vector}} AS o_score
RETURN startNode(r).id AS start_id, 'Entity' AS start_label, 'RELATED' AS type, endNode(r).id AS end_id,
       'Entity' AS end_label, null AS via_start, null AS via_end,
       CASE WHEN startNode(r) = e THEN e_score ELSE o_score END AS start_score,
       CASE WHEN startNode(r) = e THEN o_score ELSE e_score END AS end_score,
       coalesce(r.weight, 1.0) AS weight, o.id AS entity_id, o.mention_count AS mentions, o.type AS entity_type
UNION ALL
WITH {{vector $embedding}} AS question_vector
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WITH c, m, e, question_vector
// (filtered after the MATCH: a WHERE on e there made FalkorDB scan every entity per chunk)
WHERE coalesce(e.mention_count, 0) <= $max_mentions
WITH c, m, e, question_vector
ORDER BY coalesce(m.count, 1) DESC, e.id
WITH c, collect(e)[0..$per_node] AS best, question_vector
WITH c, best, {{cosine c.embedding question_vector}} AS c_score, question_vector
UNWIND best AS e
RETURN c.id AS start_id, 'Chunk' AS start_label, 'MENTIONS' AS type, e.id AS end_id, 'Entity' AS end_label,
       null AS via_start, null AS via_end, c_score AS start_score,
       {{cosine e.embedding question_vector}} AS end_score, 1.0 AS weight, e.id AS entity_id,
       e.mention_count AS mentions, e.type AS entity_type
UNION ALL
WITH {{vector $embedding}} AS question_vector
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)<-[:DESCRIBED_BY]-(e:Entity)
WITH c, e, s, question_vector
ORDER BY e.id
WITH c, s, collect(e)[0..$per_node] AS best, question_vector
WITH c, s, best, {{cosine c.embedding question_vector}} AS c_score, question_vector
UNWIND best AS e
RETURN e.id AS start_id, 'Entity' AS start_label, 'DESCRIBED_BY' AS type, c.id AS end_id, 'Chunk' AS end_label,
       null AS via_start, s.id AS via_end, {{cosine e.embedding question_vector}} AS start_score,
       c_score AS end_score, 1.0 AS weight, e.id AS entity_id,
       e.mention_count AS mentions, e.type AS entity_type
UNION ALL
WITH {{vector $embedding}} AS question_vector
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)-[l:LINKS_TO]->(t:Section)
WHERE coalesce(l.method, 'authored') IN $link_methods AND l.context_embedding IS NOT NULL
WITH c, s, l, t, {{cosine l.context_embedding question_vector}} AS link_score, question_vector
ORDER BY link_score DESC, t.id
WITH c, s, collect(t)[0..$per_node] AS chosen, question_vector
WITH c, s, chosen, {{cosine c.embedding question_vector}} AS c_score, question_vector
UNWIND chosen AS t
MATCH (t)-[:HAS_CHUNK]->(o:Chunk)
WITH c, s, t, c_score, o, {{cosine o.embedding question_vector}} AS score, question_vector
ORDER BY score DESC, o.id
WITH c, s, t, c_score, collect([o.id, score])[0] AS best
RETURN c.id AS start_id, 'Chunk' AS start_label, 'LINKS_TO' AS type, best[0] AS end_id, 'Chunk' AS end_label,
       s.id AS via_start, t.id AS via_end, c_score AS start_score,
       best[1] AS end_score, 1.0 AS weight, null AS entity_id, null AS mentions, null AS entity_type
