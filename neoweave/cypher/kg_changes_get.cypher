// The kg step's record of change (kg_changes_mark_entities): the fingerprint of the graph-wide phases it last
// completed (null while a run that reads every entity is under way), the token of that completion, whether the
// list overflowed, and the entities changed since.
MATCH (state:Meta {id: 'kg_changes'})
RETURN state.changes_fingerprint AS fingerprint, state.changes_finished AS finished,
       coalesce(state.changes_overflow, false) AS overflow, coalesce(state.changed_entity_ids, []) AS entity_ids
