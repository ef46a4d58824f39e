// kg_entities_for_homes for some entities: those the record of change names (`$ids`), those whose key is one of
// `$keys` (title names whose sections changed since the last run), and every entity holding aliases (merge
// survivors and imported entities: a home may come from an alias). Rows of an entity in two parts are equal,
// and UNION keeps one.
// @param ids: LIST  entity ids
// @param keys: LIST  entity keys
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN e.id AS id, e.key AS key, e.aliases AS aliases, collect(h.id) AS homes
UNION
UNWIND $keys AS key
MATCH (e:Entity {key: key})
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN e.id AS id, e.key AS key, e.aliases AS aliases, collect(h.id) AS homes
UNION
MATCH (e:Entity)
WHERE size(coalesce(e.aliases, [])) > 0
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN e.id AS id, e.key AS key, e.aliases AS aliases, collect(h.id) AS homes
