// Links anywhere in the graph whose context has not been embedded yet, a batch at a time (precomputing
// LARAG's link-context embeddings after ingest instead of on first use).
// @param limit: INTEGER  batch size
MATCH (s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL
RETURN s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context
LIMIT $limit
