// The record of change (kg_changes_mark_entities) for merges or an unmerge, before they are written: survivors,
// absorbed entities and the other ends of the absorbed entities' relations (moved onto the survivor, where one
// may fold into an edge the survivor has: that end's relation count changes).
// @param rows: LIST  [{survivor_id, absorbed_id}]
UNWIND $rows AS row
OPTIONAL MATCH (:Entity {id: row.absorbed_id})-[:RELATED]-(o:Entity)
WITH collect(DISTINCT row.survivor_id) + collect(DISTINCT row.absorbed_id) + collect(DISTINCT o.id) AS found
MATCH (state:Meta {id: 'kg_changes'})
WHERE size(found) > 0
WITH state, coalesce(state.changed_entity_ids, []) + found AS ids
WITH state, ids, CASE WHEN size(ids) > 20000 THEN size(ids) - 20000 ELSE 0 END AS dropped
SET state.changed_entity_ids = ids[dropped..size(ids)], state.changes_base = coalesce(state.changes_base, 0) + dropped
