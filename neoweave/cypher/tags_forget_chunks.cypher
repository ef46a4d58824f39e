// Tags: remove the machine paragraph tags of chunks (before they are re-tagged or deleted); user edits stay.
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS id
MATCH (c:Chunk {id: id})-[r:TAGGED]->(:Tag)
WHERE coalesce(r.method, '') <> 'user'
DELETE r
