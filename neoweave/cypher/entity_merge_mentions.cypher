// Move the absorbed entities' mentions to their survivors, folded into the survivor's edge from the same chunk (one
// MENTIONS per chunk and entity): the moved forms are appended to its forms (origin ids kept: they are what an
// unmerge moves back), `count` is the new total, the edge's shape (scalars for one form, lists for more) and the
// one-form scalars those of kg_create_mentions' rule (own form, else smallest origin id), the description the smaller of the two, as text or as offsets in the chunk's
// text, as the smaller one was held (the rule of kg_writes.mention_rows for forms of one chunk that arrive already
// merged). Grouped by (survivor, chunk) before
// the MERGE, so two entities absorbed into one survivor in one batch and mentioned by one chunk make one row: no
// two rows MERGE the same new edge (on FalkorDB that can lose the earlier rows' SETs).
// @param rows: LIST  [{survivor_id, absorbed_id}]
UNWIND $rows AS row
MATCH (a:Entity {id: row.absorbed_id})
MATCH (s:Entity {id: row.survivor_id})
WITH a, s
MATCH (a)<-[m:MENTIONS]-(c:Chunk)
WITH s, c, m
ORDER BY m.created_at, m.origin_id
WITH s, c, collect(m) AS moved
WITH s, c, moved, reduce(acc = [], x IN moved | acc + coalesce(x.origin_ids, [x.origin_id])) AS moved_origins,
     [x IN moved | [coalesce(x.description, substring(CASE WHEN x.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(x.description_start, 0),
                               coalesce(x.description_end - x.description_start, 0))),
                    x.description, x.description_start, x.description_end]] AS offered
MERGE (c)-[n:MENTIONS]->(s)
ON CREATE SET n.created_at = moved[0].created_at
WITH c, n, s, moved, moved_origins, offered,
     coalesce(n.origin_ids, [origin IN [n.origin_id] WHERE origin IS NOT NULL]) AS had,
     coalesce(n.names, [n.name]) AS had_names, coalesce(n.types, [coalesce(n.type, '')]) AS had_types,
     coalesce(n.counts, [toInteger(n.count)]) AS had_counts, coalesce(n.contexts, [n.context]) AS had_contexts,
     coalesce(n.methods, [n.method]) AS had_methods, coalesce(n.sources, [n.source]) AS had_sources
WITH n, s, moved, moved_origins, had, had_names, had_types, had_counts, had_contexts, had_methods, had_sources,
     [i IN range(0, size(had) - 1) WHERE NOT had[i] IN moved_origins] AS keep,
     reduce(best = [coalesce(n.description, substring(CASE WHEN n.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(n.description_start, 0),
                               coalesce(n.description_end - n.description_start, 0))),
                    n.description, n.description_start, n.description_end], o IN offered |
       CASE WHEN o[0] IS NOT NULL AND (best[0] IS NULL OR o[0] < best[0]) THEN o ELSE best END) AS described
WITH n, s, moved, described,
     [i IN keep | had[i]] + moved_origins AS origin_ids,
     [i IN keep | had_names[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.names, [x.name])) AS names,
     [i IN keep | coalesce(had_types[i], '')] + reduce(acc = [], x IN moved |
       acc + coalesce(x.types, [o IN coalesce(x.origin_ids, [x.origin_id]) | coalesce(x.type, '')])) AS types,
     [i IN keep | had_counts[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.counts, [x.count])) AS counts,
     [i IN keep | had_contexts[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.contexts, [x.context])) AS contexts,
     [i IN keep | had_methods[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.methods, [x.method])) AS methods,
     [i IN keep | had_sources[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.sources, [x.source])) AS sources
WITH n, s, moved, described, origin_ids, names, types, counts, contexts, methods, sources,
     size(origin_ids) = 1 AS one_form,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = s.id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first
SET n.name = names[first], n.method = methods[first], n.source = sources[first], n.origin_id = origin_ids[first],
    n.count = reduce(total = 0, amount IN counts | total + amount),
    n.type = CASE WHEN one_form THEN coalesce(types[0], '') ELSE null END,
    n.context = CASE WHEN one_form THEN contexts[0] ELSE null END,
    n.origin_ids = CASE WHEN one_form THEN null ELSE origin_ids END,
    n.names = CASE WHEN one_form THEN null ELSE names END,
    n.types = CASE WHEN one_form THEN null ELSE types END,
    n.counts = CASE WHEN one_form THEN null ELSE counts END,
    n.contexts = CASE WHEN one_form THEN null ELSE contexts END,
    n.methods = CASE WHEN one_form THEN null ELSE methods END,
    n.sources = CASE WHEN one_form THEN null ELSE sources END,
    n.description = described[1], n.description_start = described[2], n.description_end = described[3]
WITH moved
UNWIND moved AS gone
DELETE gone
