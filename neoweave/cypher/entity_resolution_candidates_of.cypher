// The given entities with what resolution rules look at (`entity_resolution_candidates`' columns): the entities
// logged since resolution last read the graph.
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
RETURN e.id AS id, e.key AS key, e.name AS name, e.aliases AS aliases, coalesce(e.mention_count, 0) AS mentions,
       e.type AS type, e.method AS method
