// Where an entity is mentioned: chunk, surface form, context, origin.
// @param id: STRING  entity id
// @param limit: INTEGER  at most this many
MATCH (c:Chunk)-[m:MENTIONS]->(:Entity {id: $id})
RETURN c.id AS chunk_id, c.doc_id AS doc_id, m.name AS name, m.context AS context, m.count AS count,
       m.origin_id AS origin_id, m.method AS method
ORDER BY c.id
LIMIT $limit
