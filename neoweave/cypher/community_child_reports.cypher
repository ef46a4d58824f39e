// llm community reports: the reports of sub-communities, which stand in for their members in a parent's
// context when the parent's own entities and relations do not fit the budget.
// @param ids: LIST  the sub-communities
UNWIND $ids AS id
MATCH (c:Community {id: id})
WITH c
WHERE c.title IS NOT NULL
RETURN c.id AS id, c.title AS title, c.summary AS summary, c.findings_json AS findings_json,
       c.report_fingerprint AS report_fingerprint
