// Forget the relation evidence that came from chunks (changed, deleted or re-processed): drop their entries
// from each RELATED edge's parallel lists, recompute weight and description. Edges left without evidence are
// deleted by kg_forget_empty_relations, a statement of its own: FalkorDB drops the SET of rows that a later
// WHERE filters out, so written as one statement the edges that kept other evidence kept the deleted chunk too
// (HotpotQA: deleting one document left 3 RELATED edges citing it). Both directions: a merge may have moved
// one end of an edge to an entity the chunk does not mention.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(:Entity)-[r:RELATED]-(:Entity)
WITH DISTINCT r
WITH r, [i IN range(0, size(r.chunk_ids) - 1) WHERE NOT r.chunk_ids[i] IN $chunk_ids] AS keep
WITH r, [i IN keep | r.chunk_ids[i]] AS chunk_ids, [i IN keep | r.chunk_weights[i]] AS weights,
     [i IN keep | r.descriptions[i]] AS descriptions
WITH r, chunk_ids, weights, descriptions,
     reduce(first = 0, i IN range(0, size(chunk_ids) - 1) | CASE WHEN chunk_ids[i] < chunk_ids[first] THEN i ELSE first END)
       AS first
SET r.chunk_ids = chunk_ids, r.chunk_weights = weights, r.descriptions = descriptions,
    r.weight = reduce(total = 0.0, w IN weights | total + w), r.description = descriptions[first]
