// Every merge record with what resolution compares (its derived merges are re-made from the current mentions,
// and records that no longer hold are removed or rewritten).
MATCH (m:EntityMerge)
RETURN m.id AS id, m.survivor_id AS survivor_id, m.absorbed_id AS absorbed_id, m.absorbed_json AS absorbed_json,
       m.rule AS rule, m.score AS score, m.forms AS forms, m.via AS via, m.status AS status, m.method AS method
ORDER BY id
