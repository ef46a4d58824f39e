// Enrichment: chunks a step has not processed with this signature (step@version:method:model:prompt) yet.
// New and re-ingested chunks carry no signature; a changed method, model or prompt changes the signature.
// @param signature: STRING  the step's current signature
// @param doc_ids: LIST  only chunks of these documents (empty: all)
// @param limit: INTEGER  at most this many
MATCH (c:Chunk)
WHERE (size($doc_ids) = 0 OR c.doc_id IN $doc_ids) AND NOT $signature IN coalesce(c.enriched, [])
RETURN c.id AS id
ORDER BY c.doc_id, c.order
LIMIT $limit
