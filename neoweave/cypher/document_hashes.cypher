// Stored content hashes of documents, to tell new, changed and unchanged documents apart before embedding; a
// large document a stopped run left partly written has none, but the hash being written and its stored sections.
// @param ids: LIST  document ids
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.content_hash AS content_hash, d.incomplete_hash AS incomplete_hash,
       d.sections_written AS sections_written
