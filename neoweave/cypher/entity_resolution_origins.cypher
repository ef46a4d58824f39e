// The surface forms the given entities hold, one row per chunk and origin: resolution as a derived layer reads
// each origin entity (a form merged into another) as it would stand alone, from the MENTIONS lists its merges
// folded into the survivor's edges (name and type by the smallest chunk id, count summed, documents).
// @param ids: LIST  entity ids (survivors of merges)
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[m:MENTIONS]-(c:Chunk)
WITH e, c, m, coalesce(m.origin_ids, [m.origin_id]) AS origins
UNWIND range(0, size(origins) - 1) AS i
RETURN e.id AS entity_id, c.id AS chunk_id, c.doc_id AS doc_id, origins[i] AS origin_id,
       coalesce(m.names, [m.name])[i] AS name, coalesce(m.types, [m.type])[i] AS type,
       coalesce(m.counts, [m.count])[i] AS count, coalesce(m.methods, [m.method])[i] AS method
ORDER BY entity_id, chunk_id, origin_id
