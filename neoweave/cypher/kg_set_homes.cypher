// (:Entity)-[:DESCRIBED_BY]->(:Section): the section whose title (or API anchor) names the entity.
// @param rows: LIST  [{entity_id, section_id, rule}]
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (e:Entity {id: row.entity_id})
MATCH (s:Section {id: row.section_id})
MERGE (e)-[h:DESCRIBED_BY]->(s)
SET h.rule = row.rule, h.method = 'inferred', h.source = 'kg', h.created_at = $now
