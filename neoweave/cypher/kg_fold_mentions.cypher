// Migration of a graph built before MENTIONS became one edge per (chunk, entity) (`enrich kg` runs it before its
// graph-wide phases, `entities unmerge` before undoing): up to $limit pairs with an edge of the old shape (one edge
// per surface form: `origin_id` and scalars, no lists) get one edge with parallel lists, the entity's own form
// first, then by age; their old edges are deleted. Returns the edges folded (0: nothing left of the old shape).
// @param limit: INTEGER  (chunk, entity) pairs folded by this statement
MATCH (c:Chunk)-[old:MENTIONS]->(e:Entity)
WHERE old.origin_ids IS NULL
WITH DISTINCT c, e
LIMIT $limit
MATCH (c)-[m:MENTIONS]->(e)
WITH c, e, m
ORDER BY CASE WHEN m.origin_id = e.id THEN 0 ELSE 1 END, coalesce(m.created_at, ''), coalesce(m.origin_id, '')
WITH c, e, collect(m) AS edges
WITH c, e, edges,
     reduce(acc = [], x IN edges | acc + coalesce(x.origin_ids, [coalesce(x.origin_id, '')])) AS origin_ids,
     reduce(acc = [], x IN edges | acc + coalesce(x.names, [coalesce(x.name, '')])) AS names,
     reduce(acc = [], x IN edges | acc + coalesce(x.counts, [coalesce(x.count, 1)])) AS counts,
     reduce(acc = [], x IN edges | acc + coalesce(x.contexts, [coalesce(x.context, '')])) AS contexts,
     reduce(acc = [], x IN edges | acc + coalesce(x.methods, [coalesce(x.method, '')])) AS methods,
     reduce(acc = [], x IN edges | acc + coalesce(x.sources, [coalesce(x.source, '')])) AS sources
CREATE (c)-[:MENTIONS {origin_ids: origin_ids, names: names, counts: counts, contexts: contexts, methods: methods,
                       sources: sources, count: reduce(total = 0, n IN counts | total + n), name: names[0],
                       method: methods[0], source: sources[0], origin_id: origin_ids[0],
                       created_at: edges[0].created_at}]->(e)
WITH edges
UNWIND edges AS gone
DELETE gone
RETURN count(gone) AS folded
