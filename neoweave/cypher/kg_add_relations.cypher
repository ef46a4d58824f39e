// Relation evidence from chunks: one RELATED edge per (source, target, type) holding the supporting chunks, each
// with a weight and a description; weight is their sum, description that of the smallest chunk id (not the first
// to arrive: an edge built over several runs reads as one built at once). Evidence of one chunk (89 % of edges on
// the Python docs) is the scalars `chunk_id`, `weight`, `description`; of more, parallel lists `chunk_ids`,
// `chunk_weights`, `descriptions` (FalkorDB pays per property on every edge: the one-entry lists were 24 MB of the
// Python docs graph). Readers see both shapes as lists: coalesce(r.chunk_ids, [r.chunk_id]),
// coalesce(r.chunk_weights, [r.weight]), coalesce(r.descriptions, [r.description]). Callers send one
// row per edge with the lists of a batch (`kg_writes.relation_rows`): on FalkorDB, rows MERGE-ing the same new
// edge lose each other's SETs (two chunks of one batch stating one relation kept only the second). Evidence of a
// chunk already on the edge is replaced, so a rewrite is idempotent.
// @param rows: LIST  [{source_id, target_id, type, chunk_ids, chunk_weights, descriptions, method}]
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (a:Entity {id: row.source_id})
MATCH (b:Entity {id: row.target_id})
MERGE (a)-[r:RELATED {type: row.type}]->(b)
ON CREATE SET r.method = row.method, r.created_at = $now, r.source = 'kg'
WITH r, row, coalesce(r.chunk_ids, [chunk IN [r.chunk_id] WHERE chunk IS NOT NULL]) AS had,
     coalesce(r.chunk_weights, [toFloat(r.weight)]) AS had_weights, coalesce(r.descriptions, [r.description]) AS had_descriptions
WITH r, row, had, had_weights, had_descriptions, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN row.chunk_ids] AS keep
WITH r, [i IN keep | had[i]] + row.chunk_ids AS chunk_ids,
     [i IN keep | had_weights[i]] + row.chunk_weights AS weights,
     [i IN keep | had_descriptions[i]] + row.descriptions AS descriptions
WITH r, chunk_ids, weights, descriptions,
     reduce(first = 0, i IN range(0, size(chunk_ids) - 1) | CASE WHEN chunk_ids[i] < chunk_ids[first] THEN i ELSE first END)
       AS first
SET r.weight = reduce(total = 0.0, w IN weights | total + w), r.description = descriptions[first],
    r.chunk_id = CASE WHEN size(chunk_ids) = 1 THEN chunk_ids[0] ELSE null END,
    r.chunk_ids = CASE WHEN size(chunk_ids) = 1 THEN null ELSE chunk_ids END,
    r.chunk_weights = CASE WHEN size(chunk_ids) = 1 THEN null ELSE weights END,
    r.descriptions = CASE WHEN size(chunk_ids) = 1 THEN null ELSE descriptions END
