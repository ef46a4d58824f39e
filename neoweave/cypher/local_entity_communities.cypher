// Community local search: the reported communities holding the question's entities (their leaf community
// and its ancestors up to max_level), with how many of the entities each holds. `withdrawn`: the report is older
// than a change to its members (listed in the communities state node's `members_changed`) or cites a deleted
// chunk; the caller leaves it out (stale text is never served) until `enrich communities` rewrites it.
// @param entity_ids: LIST  the question's entities
// @param max_level: INTEGER  deepest community level used
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[:IN_COMMUNITY]->(:Community)-[:PARENT_COMMUNITY*0..]->(c:Community)
WITH c, collect(DISTINCT e.id) AS entity_ids
WHERE c.level <= $max_level AND c.full_report IS NOT NULL
OPTIONAL MATCH (state:Meta {id: 'communities'})
WITH c, entity_ids, c.id IN coalesce(state.members_changed, []) AS changed
UNWIND CASE WHEN size(coalesce(c.chunk_ids, [])) = 0 THEN [null] ELSE c.chunk_ids END AS cited_id
OPTIONAL MATCH (cited:Chunk {id: cited_id})
WITH c, entity_ids, changed, count(cited_id) AS cites, count(cited) AS found
RETURN c.id AS id, c.level AS level, c.title AS title, c.full_report AS full_report, c.rating AS rating,
       c.token_count AS token_count,
       entity_ids, changed OR found < cites AS withdrawn
