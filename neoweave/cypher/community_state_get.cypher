// The fingerprint of the entity graph (and parameters) the stored communities were detected on.
// @param id: STRING  key of the state node ("communities")
MATCH (m:Meta {id: $id})
RETURN m.fingerprint AS fingerprint
