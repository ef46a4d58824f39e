// After `enrich kg` completed its graph-wide phases: the entries it read (the first `$consumed`) leave the list,
// entries written while it ran stay for the next run, and the fingerprint and token of this completion are set.
// An overflowed list stays so (the next run reads every entity).
// @param consumed: INTEGER  entries read by the run
// @param fingerprint: STRING  what the phases depend on besides the graph (their parameters, embedder, code)
// @param finished: STRING  a token naming this completion (files derived from it carry it)
MATCH (state:Meta {id: 'kg_changes'})
WITH state, coalesce(state.changed_entity_ids, []) AS ids
SET state.changed_entity_ids = CASE WHEN state.changes_overflow THEN null ELSE ids[$consumed..size(ids)] END,
    state.changes_fingerprint = $fingerprint, state.changes_finished = $finished
