// Before `enrich kg` reads every entity: the record of change exists from now on (writes are logged while the
// phases run) and is valid for nobody until they complete (fingerprint null: a run stopped half way is followed
// by another that reads every entity). With `$restart`, or on a node without a log (new, or written by an older
// neoweave), the log starts afresh under the new token `$log`: what it held, the phases are about to read anyway,
// and every reader of the old log (ppr's walk index) reads everything once.
// @param restart: BOOLEAN  start the log afresh (it overflowed, or the run reads every entity from here on)
// @param log: STRING  a new token naming the log, used when it starts afresh
MERGE (state:Meta {id: 'kg_changes'})
WITH state, $restart OR state.changes_log IS NULL AS fresh
SET state.changes_fingerprint = null, state.changes_finished = null, state.changes_overflow = null,
    state.changed_entity_ids = CASE WHEN fresh THEN [] ELSE state.changed_entity_ids END,
    state.changes_base = CASE WHEN fresh THEN 0 ELSE state.changes_base END,
    state.changes_consumed = CASE WHEN fresh THEN 0 ELSE state.changes_consumed END,
    state.changes_log = CASE WHEN fresh THEN $log ELSE state.changes_log END,
    state.changes_walk = CASE WHEN fresh THEN null ELSE state.changes_walk END
