// Before `enrich kg` reads every entity: the record of change exists from now on (writes are recorded while the
// phases run) and is valid for nobody until they complete (fingerprint null: a run stopped half way is followed
// by another that reads every entity). With `$restart` the list starts empty: what it held, the phases are about
// to read anyway.
// @param restart: BOOLEAN  empty the list (it overflowed, or the run reads every entity from here on)
MERGE (state:Meta {id: 'kg_changes'})
SET state.changes_fingerprint = null, state.changes_finished = null,
    state.changed_entity_ids = CASE WHEN $restart OR state.changed_entity_ids IS NULL THEN [] ELSE state.changed_entity_ids END,
    state.changes_overflow = CASE WHEN $restart THEN null ELSE state.changes_overflow END
