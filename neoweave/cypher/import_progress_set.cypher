// neoweave import: move the marker past a batch, in the batch's own write unit (so the batch and its record are
// applied together); only from the batch's start position, so a unit sent twice moves it once.
// @param fingerprint: STRING  sha256 of the export's manifest.json
// @param position: INTEGER  records loaded before the batch
// @param loaded: INTEGER  records loaded with it
// @param now: STRING  ISO-8601 UTC timestamp
MATCH (m:Meta {id: 'import'})
WHERE m.fingerprint = $fingerprint AND m.records_loaded = $position
SET m.records_loaded = $loaded, m.updated_at = $now
