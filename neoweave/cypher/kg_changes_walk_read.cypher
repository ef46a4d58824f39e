// ppr's walk index was built (by the knowledge base, after a write) from the log up to `$position`: entries both
// readers are past (this and the kg step's position) leave the log, so what a deleted document's entities were
// called does not outlive the next `enrich kg`. A log started afresh since (another token) is left as it is.
// @param log: STRING  the token of the log the index read
// @param position: INTEGER  the log position the index read up to
MATCH (state:Meta {id: 'kg_changes'})
WHERE state.changes_log = $log
WITH state, coalesce(state.changed_entity_ids, []) AS ids, coalesce(state.changes_base, 0) AS base,
     CASE WHEN state.changes_consumed IS NULL OR state.changes_consumed > $position THEN $position
          ELSE state.changes_consumed END AS upto
WITH state, ids, base, CASE WHEN upto < base THEN 0 WHEN upto - base > size(ids) THEN size(ids) ELSE upto - base END AS cut
SET state.changes_walk = $position, state.changed_entity_ids = ids[cut..size(ids)], state.changes_base = base + cut
