// neoweave import: the marker of an import about to start (kept when it exists: a rerun resumes from it). It is
// written before anything else, so an interrupted import is always recognised as one; records_loaded is -1 until
// the schema is applied (which happens once: a rerun must not rewrite the imported Meta node).
// @param fingerprint: STRING  sha256 of the export's manifest.json
// @param source: STRING  the export directory (for messages)
// @param now: STRING  ISO-8601 UTC timestamp
MERGE (m:Meta {id: 'import'})
ON CREATE SET m.fingerprint = $fingerprint, m.import_source = $source, m.records_loaded = -1, m.created_at = $now
RETURN m.fingerprint AS fingerprint, m.records_loaded AS records_loaded
