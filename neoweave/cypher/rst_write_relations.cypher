// rst step: rhetorical relations between paragraphs, one edge per relation: (earlier)-[:RST]->(later), "the later
// paragraph is `relation` of the earlier one", confidence `weight` in (0, 10].
// @param rows: LIST  [{source, target, relation, weight, reason, similarity, method}]
// @param source: STRING  provenance (step@version:method)
// @param now: STRING  ISO timestamp
UNWIND $rows AS row
MATCH (a:Chunk {id: row.source})
MATCH (b:Chunk {id: row.target})
MERGE (a)-[r:RST {relation: row.relation}]->(b)
SET r.weight = row.weight, r.reason = row.reason, r.similarity = row.similarity, r.method = row.method,
    r.source = $source, r.created_at = $now
