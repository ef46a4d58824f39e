// Move the absorbed entities' mentions to their survivors, folded into the survivor's edge from the same chunk (one
// MENTIONS per chunk and entity): the moved forms' entries are appended to its lists (origin ids kept: they are
// what an unmerge moves back), `count` is the new total, the one-form scalars those of kg_create_mentions' rule
// (own form, else smallest origin id), the description the smaller of the two, as text or as offsets in the chunk's
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
ON CREATE SET n.origin_ids = [], n.names = [], n.types = [], n.counts = [], n.contexts = [], n.methods = [],
              n.sources = [], n.created_at = moved[0].created_at
WITH c, n, s, moved, moved_origins, offered, coalesce(n.origin_ids, []) AS had
WITH n, s, moved, moved_origins, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN moved_origins] AS keep,
     reduce(best = [coalesce(n.description, substring(CASE WHEN n.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(n.description_start, 0),
                               coalesce(n.description_end - n.description_start, 0))),
                    n.description, n.description_start, n.description_end], o IN offered |
       CASE WHEN o[0] IS NOT NULL AND (best[0] IS NULL OR o[0] < best[0]) THEN o ELSE best END) AS described
WITH n, s, moved, described,
     [i IN keep | n.origin_ids[i]] + moved_origins AS origin_ids,
     [i IN keep | n.names[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.names, [x.name])) AS names,
     [i IN keep | coalesce(n.types[i], '')] + reduce(acc = [], x IN moved |
       acc + coalesce(x.types, [o IN coalesce(x.origin_ids, [x.origin_id]) | ''])) AS types,
     [i IN keep | n.counts[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.counts, [x.count])) AS counts,
     [i IN keep | n.contexts[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.contexts, [x.context])) AS contexts,
     [i IN keep | n.methods[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.methods, [x.method])) AS methods,
     [i IN keep | n.sources[i]] + reduce(acc = [], x IN moved | acc + coalesce(x.sources, [x.source])) AS sources
WITH n, s, moved, described, origin_ids, names, types, counts, contexts, methods, sources,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = s.id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first
SET n.origin_ids = origin_ids, n.names = names, n.types = types, n.counts = counts, n.contexts = contexts, n.methods = methods,
    n.sources = sources, n.count = reduce(total = 0, k IN counts | total + k), n.name = names[first],
    n.context = null, n.method = methods[first], n.source = sources[first],
    n.origin_id = origin_ids[first],
    n.description = described[1], n.description_start = described[2], n.description_end = described[3]
WITH moved
UNWIND moved AS gone
DELETE gone
