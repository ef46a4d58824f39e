// Relation evidence from chunks: one RELATED edge per (source, target, type) holding parallel lists of the
// supporting chunk ids, weights and descriptions; weight is their sum, description that of the smallest chunk id
// (not the first to arrive: an edge built over several runs reads as one built at once). Callers send one
// row per edge with the lists of a batch (`kg_writes.relation_rows`): on FalkorDB, rows MERGE-ing the same new
// edge lose each other's SETs (two chunks of one batch stating one relation kept only the second). Evidence of a
// chunk already on the edge is replaced, so a rewrite is idempotent.
// @param rows: LIST  [{source_id, target_id, type, chunk_ids, chunk_weights, descriptions, method}]
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (a:Entity {id: row.source_id})
MATCH (b:Entity {id: row.target_id})
MERGE (a)-[r:RELATED {type: row.type}]->(b)
ON CREATE SET r.chunk_ids = [], r.chunk_weights = [], r.descriptions = [], r.method = row.method,
              r.created_at = $now, r.source = 'kg'
WITH r, row, coalesce(r.chunk_ids, []) AS had
WITH r, row, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN row.chunk_ids] AS keep
WITH r, [i IN keep | r.chunk_ids[i]] + row.chunk_ids AS chunk_ids,
     [i IN keep | r.chunk_weights[i]] + row.chunk_weights AS weights,
     [i IN keep | r.descriptions[i]] + row.descriptions AS descriptions
WITH r, chunk_ids, weights, descriptions,
     reduce(first = 0, i IN range(0, size(chunk_ids) - 1) | CASE WHEN chunk_ids[i] < chunk_ids[first] THEN i ELSE first END)
       AS first
SET r.chunk_ids = chunk_ids, r.chunk_weights = weights, r.descriptions = descriptions,
    r.weight = reduce(total = 0.0, w IN weights | total + w), r.description = descriptions[first]
