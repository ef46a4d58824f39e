// The kg step's record of change (kg_changes_mark_entities): the fingerprint of the graph-wide phases it last
// completed (null while a run that reads every entity is under way), the token of that completion, the log's
// token, the position of its first kept entry, the position the kg step read up to, and the entries kept.
MATCH (state:Meta {id: 'kg_changes'})
RETURN state.changes_fingerprint AS fingerprint, state.changes_finished AS finished, state.changes_log AS log,
       coalesce(state.changes_base, 0) AS base, state.changes_consumed AS consumed,
       coalesce(state.changed_entity_ids, []) AS entity_ids
