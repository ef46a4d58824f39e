// The chunks naming some titles: those whose MENTIONS hold a form with one of these origin ids (a title mention,
// or an extracted name, which hides a shorter title's match under it), when those titles left the corpus or changed
// the sections they name: the chunks are extracted again and scanned with the titles there are now, as a rebuild
// would scan them.
// @param origin_ids: LIST  forms ('group:key') of the titles' keys
// @param entity_ids: LIST  the entities that can hold them: the forms themselves and the survivors of their merges
UNWIND $entity_ids AS entity_id
MATCH (c:Chunk)-[m:MENTIONS]->(:Entity {id: entity_id})
WITH c, coalesce(m.origin_ids, [m.origin_id]) AS origins
WHERE any(origin IN origins WHERE origin IN $origin_ids)
RETURN DISTINCT c.id AS chunk_id
ORDER BY chunk_id
