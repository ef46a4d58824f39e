// Question entity linking: entities whose normalised name is one of the question's word n-grams, with homes.
// @param keys: LIST  normalised n-grams of the question
UNWIND $keys AS name_key
MATCH (e:Entity {key: name_key})
OPTIONAL MATCH (e)-[:DESCRIBED_BY]->(h:Section)
RETURN name_key AS matched, e.id AS id, e.name AS name, coalesce(e.mention_count, 0) AS mentions,
       collect(h.id) AS homes
