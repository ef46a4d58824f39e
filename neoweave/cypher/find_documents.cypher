// Documents named by id, source path, or a folder their path lies in (for `neoweave delete`).
// @param key: STRING  a document id or a path
// @param folder: STRING  the key as a folder prefix (ends with /)
MATCH (d:Document)
WHERE d.id = $key OR d.path = $key OR d.path STARTS WITH $folder
RETURN d.id AS id, d.path AS path, d.title AS title
ORDER BY id
