// Record the outcome of link resolution on each document.
// @param rows: LIST  [{doc_id, resolved, unresolved}]
UNWIND $rows AS row
MATCH (d:Document {id: row.doc_id})
SET d.links_pending = false, d.links_resolved = row.resolved, d.links_unresolved = row.unresolved
