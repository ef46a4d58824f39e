// Leaf membership of kept communities: a kept id has the same members, but not always the same leaf members (an
// entity whose sub-community was deleted now belongs to this one directly; one placed in a new sub-community
// leaves it). Drops the IN_COMMUNITY edges of entities that are no longer leaf members here;
// `community_add_members` then adds the missing ones.
// @param rows: LIST  [{community_id, entity_ids}]  entity_ids: the community's leaf members now
UNWIND $rows AS row
MATCH (c:Community {id: row.community_id})
MATCH (c)<-[r:IN_COMMUNITY]-(e:Entity)
WITH row, r, e
WHERE NOT e.id IN row.entity_ids
DELETE r
