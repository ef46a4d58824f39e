// Community local search: the reported communities holding the question's entities (their leaf community
// and its ancestors up to max_level), with how many of the entities each holds.
// @param entity_ids: LIST  the question's entities
// @param max_level: INTEGER  deepest community level used
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})-[:IN_COMMUNITY]->(:Community)-[:PARENT_COMMUNITY*0..]->(c:Community)
WITH c, collect(DISTINCT e.id) AS entity_ids
WHERE c.level <= $max_level AND c.full_report IS NOT NULL
RETURN c.id AS id, c.level AS level, c.title AS title, c.full_report AS full_report, c.rating AS rating,
       c.token_count AS token_count,
       entity_ids
