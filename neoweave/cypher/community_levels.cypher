// Community counts and sizes per level (`neoweave status`, the enrich report); `withdrawn`: reports older than a
// change to their members (the communities state node's `members_changed`), which retrieval does not serve.
// The state node is read once, after the scan.
MATCH (c:Community)
WITH collect(c) AS communities
OPTIONAL MATCH (state:Meta {id: 'communities'})
WITH communities, coalesce(state.members_changed, []) AS changed
UNWIND communities AS c
RETURN c.level AS level, count(c) AS communities, min(c.size) AS min_size, max(c.size) AS max_size,
       avg(c.size) AS mean_size, sum(CASE WHEN c.summary IS NULL THEN 1 ELSE 0 END) AS without_report,
       sum(CASE WHEN c.summary IS NOT NULL AND c.method = 'llm' THEN 1 ELSE 0 END) AS llm_reports,
       sum(CASE WHEN c.summary IS NOT NULL AND c.id IN changed THEN 1 ELSE 0 END) AS withdrawn
ORDER BY level
