// Entity linking in one round trip (ppr, khl, community_local; kg with link_fulltext): entities whose
// normalised name is one of the question's word n-grams (with their homes), full-text hits over entity names
// and aliases, and the nearest entity vectors. kg_link_names is the same without the full-text branch.
// Column `via` says which ('name', 'fulltext', 'vector'); the retriever filters and ranks them. Full-text
// hits of equal score (common: one word in several names) are cut by id, not by the store's internal order,
// so a graph rebuilt or imported links the same entities.
// @param keys: LIST  normalised n-grams of the question
// @param query: STRING  the store's any-word query for the question's words (never raw user syntax)
// @param fulltext_k: INTEGER  full-text hits returned
// @param entity_k: INTEGER  nearest entity vectors returned (at least 1)
// @param embedding: VECTOR  question embedding
UNWIND $keys AS name_key
MATCH (e:Entity {key: name_key})
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN 'name' AS via, name_key AS matched, e.id AS id, e.name AS name, e.aliases AS aliases,
       coalesce(e.mention_count, 0) AS mentions, collect(h.id) AS homes, 1.0 AS score
UNION ALL
{{fulltext_nodes entity_name $query}}
WITH node, score
ORDER BY score DESC, node.id
LIMIT $fulltext_k
RETURN 'fulltext' AS via, null AS matched, node.id AS id, node.name AS name, node.aliases AS aliases,
       0 AS mentions, [] AS homes, score
UNION ALL
{{vector_nodes entity_embedding $entity_k $embedding}}
RETURN 'vector' AS via, null AS matched, node.id AS id, node.name AS name, [] AS aliases, 0 AS mentions,
       [] AS homes, score
