// Homes that no longer hold (a renamed section, a merged entity).
// @param rows: LIST  [{entity_id, section_id}]
UNWIND $rows AS row
MATCH (:Entity {id: row.entity_id})-[h:DESCRIBED_BY]->(:Section {id: row.section_id})
DELETE h
