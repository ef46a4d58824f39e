// Delete the given entities that no chunk mentions (with their home and relations): the end of a unit that
// forgot mentions with `kg_forget_chunk_mentions` and wrote them again.
// @param entity_ids: LIST  entity ids
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})
OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Chunk)
WITH e, count(m) AS remaining
WHERE remaining = 0
DETACH DELETE e
