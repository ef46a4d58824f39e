// How the corpus writes each linked entity's name (ppr's common-noun test): the entity's name, type and
// mention count, and the most mentions of a generic entity (concept, date, ...) with the same normalised key.
// "Film Director" tagged as a name in one sentence is "film director", a concept, in ten others: the corpus
// writes it as a common noun, and a question about "the director of film X" should not seed the walk with it.
// @param ids: LIST  entity ids
// @param generic_types: LIST  entity types that stand for common nouns
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
OPTIONAL MATCH (t:Entity {key: e.key})
WHERE t.type IN $generic_types AND t.id <> e.id
RETURN e.id AS id, e.name AS name, e.type AS type, coalesce(e.mention_count, 0) AS mentions,
       max(coalesce(t.mention_count, 0)) AS common_mentions
