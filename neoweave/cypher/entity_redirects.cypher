// Entity ids that were merged into another entity (extraction writes new mentions to the survivor).
// @param ids: LIST  entity ids as extracted
UNWIND $ids AS absorbed
MATCH (m:EntityMerge {absorbed_id: absorbed})
WHERE m.status = 'merged'
RETURN m.absorbed_id AS absorbed_id, m.survivor_id AS survivor_id
