// Where an entity is mentioned: one row per chunk and surface form (the forms of one chunk are one MENTIONS edge's
// parallel lists; an edge of a graph not yet folded by `kg_fold_mentions` is read as one form).
// @param id: STRING  entity id
// @param limit: INTEGER  at most this many
MATCH (c:Chunk)-[m:MENTIONS]->(:Entity {id: $id})
WITH c, m, coalesce(m.origin_ids, [m.origin_id]) AS origins
UNWIND range(0, size(origins) - 1) AS i
WITH c, m, origins, i
ORDER BY c.id, i
LIMIT $limit
RETURN c.id AS chunk_id, c.doc_id AS doc_id, coalesce(m.names, [m.name])[i] AS name,
       coalesce(m.contexts, [m.context])[i] AS context, coalesce(m.counts, [m.count])[i] AS count,
       origins[i] AS origin_id, coalesce(m.methods, [m.method])[i] AS method
