// For sections, every mention of an entity whose home is another section: the raw material of inferred links (the
// mention's context: that of its `origin_id` form, kg_create_mentions; `context` on edges an older graph wrote).
// @param section_ids: LIST  sections being recomputed
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[:HAS_CHUNK]->(c:Chunk)-[m:MENTIONS]->(e:Entity)-[:DESCRIBED_BY]->(h:Section)
WHERE h.id <> s.id
RETURN s.id AS source_id, c.id AS chunk_id, c.order AS chunk_order, e.id AS entity_id, m.name AS name,
       coalesce(m.contexts[coalesce([i IN range(0, size(coalesce(m.origin_ids, [])) - 1)
                                  WHERE m.origin_ids[i] = m.origin_id][0], 0)], m.context) AS context,
       h.id AS target_id
