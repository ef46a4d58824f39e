// Merge records by survivor or absorbed id (both empty: all), newest first.
// @param ids: LIST  entity ids (survivor or absorbed)
MATCH (m:EntityMerge)
WHERE size($ids) = 0 OR m.survivor_id IN $ids OR m.absorbed_id IN $ids
RETURN m.id AS id, m.survivor_id AS survivor_id, m.absorbed_id AS absorbed_id, m.absorbed_json AS absorbed_json,
       m.rule AS rule, m.score AS score, m.forms AS forms, m.chunk_ids AS chunk_ids, m.status AS status,
       m.method AS method, m.created_at AS created_at
ORDER BY m.created_at DESC, m.id
