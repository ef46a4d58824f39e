// An entity's description is the description its mention in the smallest chunk id carries (a mention without
// one, e.g. a title found in text, does not count): for the entities these chunks mention, take the smallest of
// their described mentions here when it comes before the one held (or the held one has no description, or none is
// held). A description kept as offsets (kg_create_mentions) is cut from the chunk's text. Run after the chunks'
// mentions are written; forgetting a describing chunk clears the description (kg_forget_descriptions) and
// kg_refill_descriptions chooses again among the rest. Entities a user imported keep theirs. An LLM entity's
// embedding encodes its description, so it is redone.
// @param chunk_ids: LIST  chunk ids just written
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})-[m:MENTIONS]->(e:Entity)
WITH e, chunk_id,
     coalesce(m.description, substring(CASE WHEN m.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(m.description_start, 0),
                               coalesce(m.description_end - m.description_start, 0)))
       AS description
WHERE description IS NOT NULL AND coalesce(e.method, '') <> 'import'
WITH e, chunk_id, description
ORDER BY chunk_id
WITH e, collect([chunk_id, description])[0] AS best
WITH e, best, coalesce(e.description_chunk, '') AS held_id
OPTIONAL MATCH (:Chunk {id: held_id})-[held:MENTIONS]->(e)
WITH e, best, held
WHERE e.description_chunk IS NULL OR held IS NULL OR (held.description IS NULL AND held.description_start IS NULL)
   OR best[0] < e.description_chunk
SET e.description = best[1], e.description_chunk = best[0]
FOREACH (_ IN CASE WHEN e.method = 'llm' THEN [1] ELSE [] END | SET e.embedding = null)
