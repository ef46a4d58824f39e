// Migration of a graph written before 2026-11-29, up to $limit edges a statement (kg_writes.compact_relations,
// once per `enrich kg` run): a RELATED edge whose evidence is one chunk gets kg_add_relations' one-chunk shape, the
// scalar `chunk_id` (its `weight` and `description` are already that chunk's) and no lists (24 MB of the Python
// docs graph). One scan of RELATED when there is nothing to do.
// @param limit: INTEGER  edges compacted by this statement
MATCH ()-[r:RELATED]->()
WHERE size(r.chunk_ids) = 1
WITH r
LIMIT $limit
SET r.chunk_id = r.chunk_ids[0], r.weight = toFloat(r.chunk_weights[0]), r.description = r.descriptions[0]
SET r.chunk_ids = null, r.chunk_weights = null, r.descriptions = null
RETURN count(r) AS updated
