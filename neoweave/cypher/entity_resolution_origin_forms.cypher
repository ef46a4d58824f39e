// The surface forms the given entities hold, one row per entity and origin: resolution as a derived layer reads
// each origin entity (a form merged into another) as it would stand alone, from the MENTIONS lists its merges
// folded into the survivor's edges: name, type and method of its mention in the smallest chunk id, its count
// summed, its documents. Aggregated here, not per chunk: a survivor such as "Python" holds thousands of mentions.
// @param ids: LIST  entity ids (survivors of merges)
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[m:MENTIONS]-(c:Chunk)
WITH e, c, m, coalesce(m.origin_ids, [m.origin_id]) AS origins
UNWIND range(0, size(origins) - 1) AS i
WITH e.id AS holder_id, origins[i] AS origin_id, c.id AS chunk_id, c.doc_id AS doc_id,
     coalesce(m.names, [m.name])[i] AS name, coalesce(m.types, [m.type])[i] AS type,
     coalesce(m.counts, [m.count])[i] AS count, coalesce(m.methods, [m.method])[i] AS method
ORDER BY holder_id, origin_id, chunk_id
WITH holder_id, origin_id, collect(chunk_id)[0] AS first_chunk, collect([name, type, method])[0] AS first,
     sum(count) AS count, collect(DISTINCT doc_id) AS doc_ids
RETURN holder_id AS entity_id, origin_id, first_chunk, first[0] AS name, first[1] AS type, first[2] AS method,
       count, doc_ids
ORDER BY entity_id, origin_id
