// Entity descriptions read from chunks being forgotten are cleared (refresh_entities refills them from a
// remaining mention; the embedding is redone). A statement of its own: FalkorDB drops FOREACH updates of
// rows that a later WHERE filters out, which is how this was written inside kg_forget_mentions before.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(e:Entity)
WHERE e.description_chunk = chunk_id
SET e.description = null, e.description_chunk = null, e.embedding = null
