// Create or update communities (structure only: the report comes later).
// @param rows: LIST  [{id, level, size, children}]
// @param method: STRING  the step's method (fast | llm)
// @param source: STRING  the step signature
// @param now: STRING  timestamp
UNWIND $rows AS row
MERGE (c:Community {id: row.id})
ON CREATE SET c.created_at = $now
SET c.level = row.level, c.size = row.size, c.children = row.children, c.method = $method, c.source = $source
