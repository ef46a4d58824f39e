// After a run: an entity's name is the surface form of its own origin (origin id = entity id) in the smallest
// chunk id that holds it, not the first form to arrive: "Christopher Nolan" stays named so when its own mentions
// were deleted and a merged form ("Christopher Edward Nolan") re-created it, and case variants of one key read as
// a rebuild reads them. An entity without an own form keeps its name; imported entities keep theirs. A renamed
// entity's embedding (which encodes the name) is cleared for the entity embedding pass that follows.
MATCH (e:Entity)<-[m:MENTIONS]-(c:Chunk)
WHERE coalesce(e.method, '') <> 'import' AND e.id IN m.origin_ids
WITH e, min(c.id) AS first_id
MATCH (:Chunk {id: first_id})-[m:MENTIONS]->(e)
WITH e, [i IN range(0, size(m.origin_ids) - 1) WHERE m.origin_ids[i] = e.id | m.names[i]][0] AS name
WHERE name IS NOT NULL AND name <> e.name
SET e.name = name, e.embedding = null
RETURN count(e) AS updated
