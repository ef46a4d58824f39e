// The title digests kept by the last completed kg run (kg_changes_titles_set) and that completion's token.
MATCH (state:Meta {id: 'kg_changes'})
RETURN state.changes_titles AS digests, state.changes_titles_finished AS finished
