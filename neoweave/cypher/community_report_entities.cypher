// Community reports: the member entities' names, types, descriptions and mention counts.
// @param entity_ids: LIST  member entity ids (of a batch of communities)
UNWIND $entity_ids AS entity_id
MATCH (e:Entity {id: entity_id})
RETURN e.id AS id, e.name AS name, e.type AS type, e.description AS description,
       coalesce(e.mention_count, 0) AS mentions
