// The title index's digests as of a completed kg run (`kg_changes.save_title_digests`), on the record of change:
// bookkeeping, left out of exports and snapshots. Without the record (a user's Cypher removed it) nothing is kept
// and the next run reads every title mention.
// @param finished: STRING  the completion's token (kg_changes_close)
// @param digests: STRING  JSON {title key: digest}
MATCH (state:Meta {id: 'kg_changes'})
SET state.changes_titles = $digests, state.changes_titles_finished = $finished
