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
WHERE size(found) > 0
WITH state, coalesce(state.changed_entity_ids, []) + found AS ids
WITH state, ids, CASE WHEN size(ids) > 20000 THEN size(ids) - 20000 ELSE 0 END AS dropped
SET state.changed_entity_ids = ids[dropped..size(ids)], state.changes_base = coalesce(state.changes_base, 0) + dropped
