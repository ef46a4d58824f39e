// Forget the relation evidence that came from chunks (changed, deleted or re-processed): drop their entries
// from each RELATED edge, recompute weight and description (the shape of kg_add_relations: scalars for one
// chunk, lists for more, empty lists for none). Edges left without evidence are
// deleted by kg_forget_empty_relations, a statement of its own: FalkorDB drops the SET of rows that a later
// WHERE filters out, so written as one statement the edges that kept other evidence kept the deleted chunk too
// (HotpotQA: deleting one document left 3 RELATED edges citing it). Both directions: a merge may have moved
// one end of an edge to an entity the chunk does not mention.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(:Entity)-[r:RELATED]-(:Entity)
WITH DISTINCT r
WITH r, coalesce(r.chunk_ids, [r.chunk_id]) AS had, coalesce(r.chunk_weights, [toFloat(r.weight)]) AS had_weights,
     coalesce(r.descriptions, [r.description]) AS had_descriptions
WITH r, had, had_weights, had_descriptions, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN $chunk_ids] AS keep
WITH r, [i IN keep | had[i]] AS chunk_ids, [i IN keep | had_weights[i]] AS weights,
     [i IN keep | had_descriptions[i]] AS descriptions
WITH r, chunk_ids, weights, descriptions,
     reduce(first = 0, i IN range(0, size(chunk_ids) - 1) | CASE WHEN chunk_ids[i] < chunk_ids[first] THEN i ELSE first END)
       AS first
SET r.weight = reduce(total = 0.0, w IN weights | total + w), r.description = descriptions[first],
    r.chunk_id = CASE WHEN size(chunk_ids) = 1 THEN chunk_ids[0] ELSE null END,
    r.chunk_ids = CASE WHEN size(chunk_ids) = 1 THEN null ELSE chunk_ids END,
    r.chunk_weights = CASE WHEN size(chunk_ids) = 1 THEN null ELSE weights END,
    r.descriptions = CASE WHEN size(chunk_ids) = 1 THEN null ELSE descriptions END
