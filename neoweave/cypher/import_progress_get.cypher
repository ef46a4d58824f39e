// neoweave import: the unfinished import this store holds, if any (the marker Meta {id: 'import'}): which export
// (the sha256 of its manifest.json) and how many of its records, in file order, are loaded.
MATCH (m:Meta {id: 'import'})
RETURN m.fingerprint AS fingerprint, m.import_source AS source, m.records_loaded AS records_loaded,
       m.created_at AS started_at
