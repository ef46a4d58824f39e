// Forget the mentions in chunks and keep their entities: resolution extracting chunks again (a merge that no
// longer holds) writes their mentions back in the same unit, and an entity mentioned again keeps its node (its
// community, home and embedding); `kg_delete_unmentioned` then removes the ones left without any mention.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[m:MENTIONS]->(:Entity)
DELETE m
