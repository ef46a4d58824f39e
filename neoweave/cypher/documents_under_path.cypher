// Documents read earlier from a file or folder (`neoweave sync PATH`): the file itself, or any file whose
// stored path lies under the folder. Documents without a path (records ingested from memory) never match.
// @param path: STRING  the resolved absolute path of the file or folder
// @param folder: STRING  the path as a folder prefix (ends with the path separator)
MATCH (d:Document)
WHERE d.path = $path OR d.path STARTS WITH $folder
RETURN d.id AS id, d.path AS path, d.content_hash AS content_hash
ORDER BY id
