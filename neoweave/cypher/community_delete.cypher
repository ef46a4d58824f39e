// Remove communities the new partition no longer has (their IN_COMMUNITY and PARENT_COMMUNITY edges go too).
// @param ids: LIST  community ids
UNWIND $ids AS community_id
MATCH (c:Community {id: community_id})
DETACH DELETE c
