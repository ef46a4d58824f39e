// Migration of a graph built before MENTIONS became one edge per (chunk, entity) (`enrich kg` runs it before its
// graph-wide phases, `entities unmerge` before undoing): up to $limit pairs with an edge of the old shape (one edge
// per surface form: `origin_id` and scalars, no lists, no `type`: one-form edges of today's shape always have a
// `type`) get one edge of kg_create_mentions' shape (scalars for one form, else parallel lists, the entity's own
// form first, then by age); their old edges are deleted. Returns the edges folded (0: nothing left of the old shape).
// @param limit: INTEGER  (chunk, entity) pairs folded by this statement
MATCH (c:Chunk)-[old:MENTIONS]->(e:Entity)
WHERE old.origin_ids IS NULL AND old.type IS NULL
WITH DISTINCT c, e
LIMIT $limit
MATCH (c)-[m:MENTIONS]->(e)
WITH c, e, m
ORDER BY CASE WHEN m.origin_id = e.id THEN 0 ELSE 1 END, coalesce(m.created_at, ''), coalesce(m.origin_id, '')
WITH c, e, collect(m) AS edges
WITH c, e, edges,
     reduce(acc = [], x IN edges | acc + coalesce(x.origin_ids, [coalesce(x.origin_id, '')])) AS origin_ids,
     reduce(acc = [], x IN edges | acc + coalesce(x.names, [coalesce(x.name, '')])) AS names,
     reduce(acc = [], x IN edges | acc + coalesce(x.types, [o IN coalesce(x.origin_ids, [x.origin_id]) |
       coalesce(x.type, '')])) AS types,
     reduce(acc = [], x IN edges | acc + coalesce(x.counts, [coalesce(x.count, 1)])) AS counts,
     reduce(acc = [], x IN edges | acc + coalesce(x.contexts, [coalesce(x.context, '')])) AS contexts,
     reduce(acc = [], x IN edges | acc + coalesce(x.methods, [coalesce(x.method, '')])) AS methods,
     reduce(acc = [], x IN edges | acc + coalesce(x.sources, [coalesce(x.source, '')])) AS sources
WITH c, e, edges, origin_ids, names, types, counts, contexts, methods, sources, size(origin_ids) = 1 AS one_form
CREATE (c)-[n:MENTIONS {count: reduce(total = 0, k IN counts | total + k), name: names[0], method: methods[0],
                        source: sources[0], origin_id: origin_ids[0], created_at: edges[0].created_at}]->(e)
SET n.type = CASE WHEN one_form THEN types[0] ELSE null END,
    n.context = CASE WHEN one_form THEN contexts[0] ELSE null END,
    n.origin_ids = CASE WHEN one_form THEN null ELSE origin_ids END,
    n.names = CASE WHEN one_form THEN null ELSE names END,
    n.types = CASE WHEN one_form THEN null ELSE types END,
    n.counts = CASE WHEN one_form THEN null ELSE counts END,
    n.contexts = CASE WHEN one_form THEN null ELSE contexts END,
    n.methods = CASE WHEN one_form THEN null ELSE methods END,
    n.sources = CASE WHEN one_form THEN null ELSE sources END
WITH edges
UNWIND edges AS gone
DELETE gone
RETURN count(gone) AS folded
