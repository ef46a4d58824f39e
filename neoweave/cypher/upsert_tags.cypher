// Create or update topic tags (Orion-RAG tag paths), batched.
// @param rows: LIST  [{name, kind, method, source}]
UNWIND $rows AS row
MERGE (t:Tag {name: row.name})
SET t.kind = row.kind, t.method = row.method, t.source = row.source
