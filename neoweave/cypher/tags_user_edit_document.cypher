// Tags: a user's edit of a document's tags: add (removed = false) or remove (removed = true) one tag. The edge
// keeps who and when with method 'user', so machine re-tagging never overrides it.
// @param id: STRING  document id
// @param tag: STRING  normalised tag name
// @param removed: BOOLEAN  true to remove the tag
// @param by: STRING  who made the edit
// @param now: STRING  ISO time
MATCH (x:Document {id: $id})
MERGE (t:Tag {name: $tag})
ON CREATE SET t.created_at = $now
MERGE (x)-[r:TAGGED]->(t)
SET r.method = 'user', r.removed = $removed, r.by = $by, r.edited_at = $now, r.source = 'user',
    r.rank = coalesce(r.rank, -1), r.weight = coalesce(r.weight, 1.0)
RETURN x.id AS id
