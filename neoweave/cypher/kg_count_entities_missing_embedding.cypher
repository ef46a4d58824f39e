// How many entities kg_entities_missing_embedding will return in all (the total of the progress bar).
// @param unembedded_types: LIST  entity types of fast-method entities that get no vector
MATCH (e:Entity)
WHERE e.embedding IS NULL AND NOT (e.method = 'fast' AND e.type IN $unembedded_types)
RETURN count(e) AS missing
