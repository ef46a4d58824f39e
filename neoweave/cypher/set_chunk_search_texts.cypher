// Set chunks' full-text search text (`store.values.search_text`; null removes it).
// @param rows: LIST  [{id, search_text}]
UNWIND $rows AS row
MATCH (c:Chunk {id: row.id})
SET c.search_text = row.search_text
