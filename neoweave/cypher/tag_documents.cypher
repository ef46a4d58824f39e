// Tags: what master tags are chosen from: each document's title and its first chunks (id, text and embedding).
// @param doc_ids: LIST  document ids
// @param chunks: INTEGER  leading chunks returned per document
UNWIND $doc_ids AS id
MATCH (d:Document {id: id})
MATCH (c:Chunk {doc_id: id})
WITH d, c
ORDER BY c.order
WITH d, collect(c)[..$chunks] AS lead
RETURN d.id AS doc_id, d.title AS title, [c IN lead | c.id] AS ids, [c IN lead | c.text] AS texts, [c IN lead | c.embedding] AS embeddings
