// Migration of a graph written before 2026-11-29, up to $limit edges a statement (kg_writes.compact_mentions, once
// per `enrich kg` run): a MENTIONS edge of one surface form gets kg_create_mentions' one-form shape (the form as
// scalars: `type` and `context` from the lists, which are removed; 98 MB of the Python docs graph's 535), and an
// edge of more forms loses the scalar copy of its first context that graphs written before 2026-11-28 hold
// (readers take `contexts` at `origin_id`'s index). One scan of MENTIONS when there is nothing to do.
// The scalars are set before the lists are removed: the SET items read the edge in order.
// @param limit: INTEGER  edges compacted by this statement
MATCH ()-[m:MENTIONS]->()
WHERE m.contexts IS NOT NULL AND (size(m.origin_ids) = 1 OR m.context IS NOT NULL)
WITH m
LIMIT $limit
WITH m, size(m.origin_ids) = 1 AS one_form
SET m.type = CASE WHEN one_form THEN coalesce(coalesce(m.types, [''])[0], '') ELSE null END,
    m.context = CASE WHEN one_form THEN m.contexts[0] ELSE null END
SET m.origin_ids = CASE WHEN one_form THEN null ELSE m.origin_ids END,
    m.names = CASE WHEN one_form THEN null ELSE m.names END,
    m.types = CASE WHEN one_form THEN null ELSE m.types END,
    m.counts = CASE WHEN one_form THEN null ELSE m.counts END,
    m.contexts = CASE WHEN one_form THEN null ELSE m.contexts END,
    m.methods = CASE WHEN one_form THEN null ELSE m.methods END,
    m.sources = CASE WHEN one_form THEN null ELSE m.sources END
RETURN count(m) AS updated
