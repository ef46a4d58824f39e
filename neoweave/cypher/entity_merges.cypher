// Merge records by survivor or absorbed id (both empty: all), newest first. `chunk_ids` are the chunks that
// mention the absorbed entity's forms now (on the survivor's MENTIONS, by origin), read from the graph rather than
// stored on the record: a record lists no chunk that was since deleted, and one made before later chunks arrived
// reads as one made after them. The survivor is bound by its id first: FalkorDB 4.22.1 otherwise starts the
// pattern at the chunks and scans them all once per record.
// @param ids: LIST  entity ids (survivor or absorbed)
MATCH (m:EntityMerge)
WHERE size($ids) = 0 OR m.survivor_id IN $ids OR m.absorbed_id IN $ids
OPTIONAL MATCH (survivor:Entity {id: m.survivor_id})
OPTIONAL MATCH (c:Chunk)-[mention:MENTIONS]->(survivor)
WHERE m.absorbed_id IN coalesce(mention.origin_ids, [mention.origin_id])
WITH m, collect(c.id) AS chunk_ids
RETURN m.id AS id, m.survivor_id AS survivor_id, m.absorbed_id AS absorbed_id, m.absorbed_json AS absorbed_json,
       m.rule AS rule, m.score AS score, m.forms AS forms, chunk_ids, m.status AS status,
       m.method AS method, m.created_at AS created_at
ORDER BY m.created_at DESC, m.id
