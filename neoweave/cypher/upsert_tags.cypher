// Create topic tags by name (a tag vocabulary imported ahead of tagging), batched; existing tags are kept.
// @param rows: LIST  [{name, created_at}]  normalised tag names
UNWIND $rows AS row
MERGE (t:Tag {name: row.name})
ON CREATE SET t.created_at = row.created_at
