// Delete the RELATED edges that kg_forget_relations left without evidence (run right after it, before the
// chunks' mentions are forgotten: the edges are found through them). An emptied edge holds empty lists; one of
// one chunk holds `chunk_id` and no list, so size(null) keeps it.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(:Entity)-[r:RELATED]-(:Entity)
WITH DISTINCT r
WHERE size(r.chunk_ids) = 0
DELETE r
