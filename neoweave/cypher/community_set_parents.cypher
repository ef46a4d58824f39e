// Hierarchy: a community points at the community it was split from.
// @param rows: LIST  [{id, parent_id}]
UNWIND $rows AS row
MATCH (c:Community {id: row.id})
MATCH (p:Community {id: row.parent_id})
MERGE (c)-[:PARENT_COMMUNITY]->(p)
