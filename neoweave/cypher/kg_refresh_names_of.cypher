// The entities `$ids` (every entity a part at a time after a run that read them all; those a run changed):
// an entity's name and type are the surface form and extractor type of its own origin (origin id =
// entity id) in the smallest chunk id that holds it, not those of the first form to arrive: "Christopher Nolan"
// stays named so when its own mentions were deleted and a merged form ("Christopher Edward Nolan") re-created it,
// and case variants or types of one key (spaCy tags "Aristotle" ORG in one sentence and a name in another) read
// as a rebuild reads them. An entity without an own form keeps its name and type; an edge written before
// MENTIONS kept types keeps the type; imported entities keep theirs. A changed entity's embedding is cleared for
// the entity embedding pass that follows: it encodes the name, and the type decides whether it has one at all.
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})<-[m:MENTIONS]-(c:Chunk)
WHERE coalesce(e.method, '') <> 'import' AND e.id IN coalesce(m.origin_ids, [m.origin_id])
WITH e, min(c.id) AS first_id
MATCH (:Chunk {id: first_id})-[m:MENTIONS]->(e)
WITH e, m, coalesce(m.origin_ids, [m.origin_id]) AS origins
WITH e, m, [i IN range(0, size(origins) - 1) WHERE origins[i] = e.id][0] AS own
WITH e, coalesce(m.names, [m.name])[own] AS name, coalesce(m.types, [m.type])[own] AS known
WITH e, name, CASE WHEN known IS NULL OR known = '' THEN e.type ELSE known END AS type
WHERE name IS NOT NULL AND (name <> e.name OR type <> e.type)
SET e.name = name, e.type = type, e.embedding = null
RETURN count(e) AS updated
