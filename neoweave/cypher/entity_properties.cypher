// Entities by id, with the properties a merge record keeps to restore them (one indexed lookup per id).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
RETURN e.id AS id, e.key AS key, e.name AS name, e.type AS type, e.description AS description,
       e.aliases AS aliases, e.method AS method
