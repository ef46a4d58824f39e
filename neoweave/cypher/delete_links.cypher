// Remove links a re-resolution or recomputation no longer produces (the ones it keeps keep their context
// embedding).
// @param rows: LIST  [{source_id, order, target_id}]
UNWIND $rows AS row
MATCH (:Section {id: row.source_id})-[l:LINKS_TO {order: row.order}]->(:Section {id: row.target_id})
DELETE l
