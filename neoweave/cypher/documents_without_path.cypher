// How many documents record no source file (records ingested from memory, e.g. LangChain documents):
// `neoweave sync` cannot attribute them to a path, so it never deletes them and says how many there are.
MATCH (d:Document)
WHERE coalesce(d.path, '') = ''
RETURN count(d) AS documents
