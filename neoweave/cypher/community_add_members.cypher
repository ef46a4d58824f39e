// Leaf membership: each entity's deepest community gets its IN_COMMUNITY edge (parents hold members through
// PARENT_COMMUNITY). Every community's leaf members are passed: a kept id has the same members, but its leaf members
// change with its sub-communities (`community_drop_members` runs first); MERGE leaves an existing edge single.
// @param rows: LIST  [{community_id, entity_id, level}]
UNWIND $rows AS row
MATCH (c:Community {id: row.community_id})
MATCH (e:Entity {id: row.entity_id})
MERGE (e)-[m:IN_COMMUNITY]->(c)
SET m.level = row.level
