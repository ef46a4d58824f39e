// Replace the graph's write stamp (see meta_stamp_get); nothing on a graph without its Meta node yet.
// @param id: STRING  key of the Meta node (always "meta")
// @param stamp: STRING  a new random token
MATCH (m:Meta {id: $id})
SET m.stamp = $stamp
