// Tags of a document (master) and of one of its chunks (paragraph; none for chunk_id ''), with how each was
// made; tags a user removed included, flagged.
// @param doc_id: STRING  document id
// @param chunk_id: STRING  chunk id, or '' for the document alone
MATCH (d:Document {id: $doc_id})
OPTIONAL MATCH (d)-[m:TAGGED]->(u:Tag)
WITH d, collect(CASE WHEN u IS NULL THEN null ELSE
                {tag: u.name, layer: 'master', rank: m.rank, weight: m.weight, method: m.method,
                 removed: coalesce(m.removed, false), by: m.by, edited_at: m.edited_at} END) AS master
OPTIONAL MATCH (c:Chunk {id: $chunk_id})-[r:TAGGED]->(t:Tag)
RETURN d.title AS title, master,
       collect(CASE WHEN t IS NULL THEN null ELSE
               {tag: t.name, layer: 'paragraph', rank: r.rank, weight: r.weight, method: r.method,
                removed: coalesce(r.removed, false), by: r.by, edited_at: r.edited_at} END) AS paragraph
