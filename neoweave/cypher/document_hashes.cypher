// Stored content hashes of documents, to tell new, changed and unchanged documents apart before embedding.
// @param ids: LIST  document ids
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.content_hash AS content_hash
