// The kg step's record of change (`enrich.kg_changes`): these entities gained or lost mentions or relation
// evidence, so `enrich kg` refreshes their counts, names and homes and compares them in resolution, instead of
// reading every entity. Appended to the list on the Meta node 'kg_changes', which the step creates when it
// completes its graph-wide phases; without that node (a graph its phases never completed on) nothing is
// recorded: the next run reads every entity anyway. Past 20,000 entries (a large increment) the list gives way
// to `overflow`, and the next run reads every entity. Kept on the Meta node, not the entities: on FalkorDB a write
// to a vector-indexed node re-inserts its vector.
// @param entity_ids: LIST  entity ids (duplicates allowed)
MATCH (state:Meta {id: 'kg_changes'})
WHERE state.changes_overflow IS NULL AND size($entity_ids) > 0
WITH state, coalesce(state.changed_entity_ids, []) + $entity_ids AS ids
SET state.changed_entity_ids = CASE WHEN size(ids) > 20000 THEN null ELSE ids END,
    state.changes_overflow = CASE WHEN size(ids) > 20000 THEN true ELSE null END
