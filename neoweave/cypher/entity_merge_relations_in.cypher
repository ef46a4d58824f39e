// Move the absorbed entities' incoming relations to their survivors, joining their evidence with the survivor's
// own (the shape of kg_add_relations: scalars for one chunk, lists for more) (a relation between the two would be a self-loop and is dropped with the absorbed entity); weight is the sum
// of the evidence weights. A chunk on both edges (it named both forms) keeps one entry, the weights added and the
// smaller description kept, and the edge's description is the smallest chunk id's: what kg_writes.relation_rows
// and kg_add_relations write when the merge came before the chunk (a merged graph reads as one grown after the
// merge). Grouped by (survivor, other end, type) before the MERGE, so relations of two entities
// absorbed into one survivor in one batch make one row: no two rows MERGE the same new edge (on FalkorDB that
// loses SETs in kg_add_relations' shape; not seen in this one, grouped anyway).
// @param rows: LIST  [{survivor_id, absorbed_id}]
// (Both ends are bound first: matching the pattern from the absorbed id let FalkorDB scan every entity,
// 15 s for 200 merges on HotpotQA.)
UNWIND $rows AS row
MATCH (a:Entity {id: row.absorbed_id})
MATCH (s:Entity {id: row.survivor_id})
WITH a, s
MATCH (a)<-[r:RELATED]-(o:Entity)
WHERE o <> s
WITH s, o, r, a.id AS absorbed
ORDER BY absorbed, r.created_at
WITH s, o, r.type AS type, collect(r) AS moved
MERGE (o)-[n:RELATED {type: type}]->(s)
ON CREATE SET n.method = moved[0].method, n.created_at = moved[0].created_at, n.source = moved[0].source
WITH n, moved,
     coalesce(n.chunk_ids, [chunk IN [n.chunk_id] WHERE chunk IS NOT NULL])
       + reduce(acc = [], x IN moved | acc + coalesce(x.chunk_ids, [x.chunk_id])) AS chunk_ids,
     CASE WHEN n.chunk_id IS NULL THEN coalesce(n.chunk_weights, []) ELSE [toFloat(n.weight)] END
       + reduce(acc = [], x IN moved | acc + coalesce(x.chunk_weights, [toFloat(x.weight)])) AS weights,
     CASE WHEN n.chunk_id IS NULL THEN coalesce(n.descriptions, []) ELSE [n.description] END
       + reduce(acc = [], x IN moved | acc + coalesce(x.descriptions, [x.description])) AS descriptions
WITH n, moved, chunk_ids, weights, descriptions,
     [i IN range(0, size(chunk_ids) - 1) WHERE NOT chunk_ids[i] IN chunk_ids[0..i]] AS firsts
WITH n, moved, [i IN firsts | chunk_ids[i]] AS chunk_ids,
     [i IN firsts | reduce(total = 0.0, j IN range(i, size(chunk_ids) - 1) |
        total + CASE WHEN chunk_ids[j] = chunk_ids[i] THEN weights[j] ELSE 0.0 END)] AS weights,
     [i IN firsts | reduce(least = descriptions[i], j IN range(i, size(chunk_ids) - 1) |
        CASE WHEN chunk_ids[j] = chunk_ids[i] AND descriptions[j] IS NOT NULL
                  AND (least IS NULL OR descriptions[j] < least) THEN descriptions[j] ELSE least END)] AS descriptions
WITH n, moved, chunk_ids, weights, descriptions,
     reduce(first = 0, i IN range(0, size(chunk_ids) - 1) | CASE WHEN chunk_ids[i] < chunk_ids[first] THEN i ELSE first END)
       AS first
SET n.weight = reduce(total = 0.0, w IN weights | total + w), n.description = descriptions[first],
    n.chunk_id = CASE WHEN size(chunk_ids) = 1 THEN chunk_ids[0] ELSE null END,
    n.chunk_ids = CASE WHEN size(chunk_ids) = 1 THEN null ELSE chunk_ids END,
    n.chunk_weights = CASE WHEN size(chunk_ids) = 1 THEN null ELSE weights END,
    n.descriptions = CASE WHEN size(chunk_ids) = 1 THEN null ELSE descriptions END
WITH moved
UNWIND moved AS gone
DELETE gone
