// After writes the kg step's record of change cannot follow (Cypher typed by a user): without the record, the
// next `enrich kg` reads every entity.
MATCH (state:Meta {id: 'kg_changes'})
DELETE state
