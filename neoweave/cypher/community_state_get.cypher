// The fingerprint of the entity graph (and parameters) the stored communities were detected on, and the
// communities a member of which changed since their report was written (community_mark_changed_chunks).
// @param id: STRING  key of the state node ("communities")
MATCH (m:Meta {id: $id})
RETURN m.fingerprint AS fingerprint, coalesce(m.members_changed, []) AS members_changed
