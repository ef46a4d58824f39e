// Record a merge decision before it is applied (the absorbed entity's properties, so it can be restored).
// The chunks involved are not stored: entity_merges reads them from the MENTIONS origins.
// @param rows: LIST  [{id, survivor_id, absorbed_id, absorbed_json, rule, score, forms, method, via}]
//   via: the entity of the cluster whose rule joined the absorbed one (null when made by a user)
// @param now: STRING  timestamp
UNWIND $rows AS row
MERGE (m:EntityMerge {id: row.id})
SET m.survivor_id = row.survivor_id, m.absorbed_id = row.absorbed_id, m.absorbed_json = row.absorbed_json,
    m.rule = row.rule, m.score = row.score, m.forms = row.forms, m.via = row.via,
    m.status = 'merged', m.method = row.method, m.source = 'resolution', m.created_at = $now
