// Titles of documents (evaluation: record corpora name their gold evidence by document title).
// @param ids: LIST  document ids
UNWIND $ids AS id
MATCH (d:Document {id: id})
RETURN d.id AS id, d.title AS title
