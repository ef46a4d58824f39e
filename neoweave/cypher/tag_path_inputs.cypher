// Tags: what a chunk's tag path is made of: its document's master tags and its own paragraph tags, each with its
// method and whether a user removed it (such a tag stays out of the path, whatever a machine method says).
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})
OPTIONAL MATCH (c)-[r:TAGGED]->(t:Tag)
WITH c, collect(CASE WHEN t IS NULL THEN null
                     ELSE {name: t.name, rank: r.rank, method: r.method, removed: coalesce(r.removed, false)} END) AS own
MATCH (d:Document {id: c.doc_id})
OPTIONAL MATCH (d)-[m:TAGGED]->(u:Tag)
WITH c, d, own, collect(CASE WHEN u IS NULL THEN null
                             ELSE {name: u.name, rank: m.rank, method: m.method, removed: coalesce(m.removed, false)}
                        END) AS master
RETURN c.id AS chunk_id, d.id AS doc_id, d.title AS title, master, own
