// After `enrich kg` completed its graph-wide phases: its position in the log moves past the entries it read
// (entries written while it ran come after it: the next run reads them), and the fingerprint and token of this
// completion are set. Entries the walk index has read too (`changes_walk`, kg_changes_walk_read; none when no
// index reads the log) leave the log; the others stay for it. A log started afresh under the run (another token)
// leaves the record valid for nobody.
// @param consumed: INTEGER  the log position the run read up to
// @param log: STRING  the token of the log the run read
// @param fingerprint: STRING  what the phases depend on besides the graph (their parameters, embedder, code)
// @param finished: STRING  a token naming this completion (files derived from it carry it)
MATCH (state:Meta {id: 'kg_changes'})
WITH state, coalesce(state.changes_log = $log, false) AS same, coalesce(state.changed_entity_ids, []) AS ids,
     coalesce(state.changes_base, 0) AS base
WITH state, same, ids, base,
     CASE WHEN NOT same THEN base WHEN state.changes_walk IS NULL OR state.changes_walk > $consumed THEN $consumed
          ELSE state.changes_walk END AS upto
WITH state, same, ids, base,
     CASE WHEN upto < base THEN 0 WHEN upto - base > size(ids) THEN size(ids) ELSE upto - base END AS cut
SET state.changes_consumed = CASE WHEN same THEN $consumed ELSE -1 END,
    state.changes_fingerprint = CASE WHEN same THEN $fingerprint ELSE null END, state.changes_finished = $finished,
    state.changed_entity_ids = ids[cut..size(ids)], state.changes_base = base + cut
