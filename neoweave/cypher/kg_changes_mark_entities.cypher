// The kg step's record of change (`enrich.kg_changes`): these entities gained or lost mentions or relation
// evidence, so `enrich kg` refreshes their counts, names and homes and compares them in resolution, and ppr's walk
// index re-reads their mentions and relations, instead of reading every entity. Appended to the log on the Meta
// node 'kg_changes', which the step creates when it first completes its graph-wide phases; without that node
// nothing is recorded (the next run reads every entity anyway). The log keeps its last 20,000 entries; each
// reader remembers the absolute position it read up to (changes_base is the position of the first entry kept),
// and a reader whose position fell out of the window reads everything. Kept on the Meta node, not the
// entities: on FalkorDB a write to a vector-indexed node re-inserts its vector.
// @param entity_ids: LIST  entity ids (duplicates allowed)
MATCH (state:Meta {id: 'kg_changes'})
WHERE size($entity_ids) > 0
WITH state, coalesce(state.changed_entity_ids, []) + $entity_ids AS ids
WITH state, ids, CASE WHEN size(ids) > 20000 THEN size(ids) - 20000 ELSE 0 END AS dropped
SET state.changed_entity_ids = ids[dropped..size(ids)], state.changes_base = coalesce(state.changes_base, 0) + dropped
