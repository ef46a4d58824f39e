// Community staleness: the communities holding these entities, and every community above them, are recorded as
// changed since their report (a member is merged, restored by an unmerge, or deleted); see
// community_mark_changed_chunks.
// @param entity_ids: LIST  entity ids
UNWIND $entity_ids AS entity_id
MATCH (:Entity {id: entity_id})-[:IN_COMMUNITY]->(leaf:Community)
WITH DISTINCT leaf
MATCH (leaf)-[:PARENT_COMMUNITY*0..]->(m:Community)
WITH collect(DISTINCT m.id) AS ids
WHERE size(ids) > 0
MATCH (state:Meta {id: 'communities'})
WITH state, ids, coalesce(state.members_changed, []) AS had
WITH state, had, [x IN ids WHERE NOT x IN had] AS added
WHERE size(added) > 0
SET state.members_changed = had + added
