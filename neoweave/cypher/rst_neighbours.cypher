// KHL-RAG: first-order rhetorical neighbours of seed paragraphs through RST edges weighing more than min_weight
// (either direction), with the edge.
// @param ids: LIST  seed chunk ids
// @param min_weight: FLOAT  the threshold tau
UNWIND $ids AS id
MATCH (c:Chunk {id: id})-[r:RST]-(n:Chunk)
WHERE r.weight > $min_weight
RETURN id AS seed_id, n.id AS chunk_id, r.relation AS relation, r.weight AS weight, startNode(r).id AS source_id,
       endNode(r).id AS target_id
