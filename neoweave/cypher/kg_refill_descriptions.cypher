// After a run: an entity without a description (its describing chunk was forgotten, or no mention described it)
// takes the description of its described mention with the smallest chunk id, else the context of its mention in
// the smallest chunk id (the same rule as kg_describe_entities, so a graph grown by increments describes an entity
// as a rebuild would). Entities a user imported keep theirs. An LLM entity's embedding encodes its description,
// so it is redone.
MATCH (e:Entity)
WHERE e.description IS NULL AND coalesce(e.method, '') <> 'import'
MATCH (e)<-[m:MENTIONS]-(c:Chunk)
WITH e, c.id AS chunk_id,
     coalesce(m.description, substring(CASE WHEN m.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(m.description_start, 0),
                               coalesce(m.description_end - m.description_start, 0)))
       AS description,
     coalesce(m.contexts[coalesce([i IN range(0, size(coalesce(m.origin_ids, [])) - 1)
                                  WHERE m.origin_ids[i] = m.origin_id][0], 0)], m.context) AS context
ORDER BY chunk_id
WITH e, collect(CASE WHEN description IS NULL THEN null ELSE [chunk_id, description] END) AS described,
     collect([chunk_id, context])[0] AS first
WITH e, coalesce(described[0], first) AS chosen
SET e.description = chosen[1], e.description_chunk = chosen[0]
FOREACH (_ IN CASE WHEN e.method = 'llm' THEN [1] ELSE [] END | SET e.embedding = null)
RETURN count(e) AS updated
