// For sections, every mention of an entity whose home is another section: the raw material of inferred links.
// @param section_ids: LIST  sections being recomputed
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[:HAS_CHUNK]->(c:Chunk)-[m:MENTIONS]->(e:Entity)-[:DESCRIBED_BY]->(h:Section)
WHERE h.id <> s.id
RETURN s.id AS source_id, c.id AS chunk_id, c.order AS chunk_order, e.id AS entity_id, m.name AS name,
       m.context AS context, h.id AS target_id
