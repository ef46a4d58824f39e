// Record the entity graph fingerprint the communities now reflect (written with the partition, atomically).
// @param id: STRING  key of the state node ("communities")
// @param fingerprint: STRING  graph + parameters fingerprint
// @param now: STRING  timestamp
MERGE (m:Meta {id: $id})
ON CREATE SET m.created_at = $now
SET m.fingerprint = $fingerprint, m.updated_at = $now
