// The record of change (kg_changes_mark_entities) before what the kg step derived from these chunks is forgotten
// (`store.provenance`: a document deleted or rewritten, a chunk re-extracted): the entities the chunks mention and
// the other ends of the relations citing them, whose counts, names or homes the forgetting changes.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(e:Entity)
OPTIONAL MATCH (e)-[r:RELATED]-(o:Entity)
WHERE chunk_id IN coalesce(r.chunk_ids, [r.chunk_id])
WITH collect(DISTINCT e.id) + collect(DISTINCT o.id) AS found
MATCH (state:Meta {id: 'kg_changes'})
WHERE state.changes_overflow IS NULL AND size(found) > 0
WITH state, coalesce(state.changed_entity_ids, []) + found AS ids
SET state.changed_entity_ids = CASE WHEN size(ids) > 20000 THEN null ELSE ids END,
    state.changes_overflow = CASE WHEN size(ids) > 20000 THEN true ELSE null END
