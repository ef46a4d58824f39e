// LARAG: cache link-context embeddings on the LINKS_TO edges.
// @param rows: LIST  [{source_id, target_id, order, embedding}]
UNWIND $rows AS row
MATCH (s:Section {id: row.source_id})-[l:LINKS_TO {order: row.order}]->(t:Section {id: row.target_id})
SET l.context_embedding = {{vector row.embedding}}
