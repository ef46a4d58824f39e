// The entities whose stored counts (mention_count, relation_count: kg_refresh_entities_of) forgetting these chunks
// changes: those the chunks mention, and the other ends of relations citing them (a merge can move an end to an
// entity the chunk does not mention; an entity left without mentions is deleted with its relations). Read
// before the forgetting (`store.provenance`), for kg_refresh_entities_of after it.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(e:Entity)
OPTIONAL MATCH (e)-[r:RELATED]-(o:Entity)
WHERE chunk_id IN coalesce(r.chunk_ids, [r.chunk_id])
WITH collect(DISTINCT e.id) + collect(DISTINCT o.id) AS ids
UNWIND ids AS id
RETURN DISTINCT id
ORDER BY id
