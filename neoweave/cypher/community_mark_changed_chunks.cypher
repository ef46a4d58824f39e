// Community staleness: the communities holding an entity these chunks mention, and every community above them,
// are recorded as changed since their report (`members_changed` on the communities' state node: a member gained
// or lost mentions or relation evidence). Run by the kg writes and before a chunk's kg derivations are forgotten
// (`store.provenance`); `community_clear_changed` removes a community once its report is rewritten, which the
// communities step does for every recorded one. Kept on the Meta node, not the Community: on FalkorDB any write
// to a vector-indexed node re-inserts its vector (an index the kg step and ingest do not rebuild).
// @param chunk_ids: LIST  chunk ids
UNWIND $chunk_ids AS chunk_id
MATCH (:Chunk {id: chunk_id})-[:MENTIONS]->(e:Entity)
WITH DISTINCT e
MATCH (e)-[:IN_COMMUNITY]->(leaf:Community)
WITH DISTINCT leaf
MATCH (leaf)-[:PARENT_COMMUNITY*0..]->(m:Community)
WITH collect(DISTINCT m.id) AS ids
WHERE size(ids) > 0
MATCH (state:Meta {id: 'communities'})
WITH state, ids, coalesce(state.members_changed, []) AS had
WITH state, had, [x IN ids WHERE NOT x IN had] AS added
WHERE size(added) > 0
SET state.members_changed = had + added
