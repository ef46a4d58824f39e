// Replace the graph's write stamp (see meta_stamp_get), returning the one replaced (a write span learns from it
// whether another writer replaced the stamp while it ran); nothing on a graph without its Meta node yet.
// @param id: STRING  key of the Meta node (always "meta")
// @param stamp: STRING  a new random token
MATCH (m:Meta {id: $id})
WITH m, m.stamp AS previous
SET m.stamp = $stamp
RETURN previous
