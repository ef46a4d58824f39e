// Every title mention in the graph: per chunk, the origin ids ('name:' + a title's key) of the forms the title scan
// wrote (source ending with ':titles'). Read when no record says which titles changed since the last run (a first
// run, a remote store, changed parameters): the caller keeps the chunks naming a title that is no longer one.
MATCH (c:Chunk)-[m:MENTIONS]->(:Entity)
WITH c, coalesce(m.origin_ids, [m.origin_id]) AS origins, coalesce(m.sources, [m.source]) AS sources
UNWIND range(0, size(origins) - 1) AS i
WITH c, origins[i] AS origin, sources[i] AS source
WHERE source ENDS WITH ':titles'
RETURN c.id AS chunk_id, collect(DISTINCT origin) AS origin_ids
ORDER BY chunk_id
