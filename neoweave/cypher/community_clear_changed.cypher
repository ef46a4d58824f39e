// Community staleness: communities whose report was just rewritten (or that were deleted) are no longer recorded
// as changed since their report (see community_mark_changed_chunks); an empty record is removed, as a graph that
// never recorded one has none.
// @param ids: LIST  community ids
MATCH (state:Meta {id: 'communities'})
WITH state, coalesce(state.members_changed, []) AS had
WITH state, [x IN had WHERE NOT x IN $ids] AS kept, size(had) AS before
WHERE size(kept) < before
SET state.members_changed = CASE WHEN size(kept) = 0 THEN null ELSE kept END
