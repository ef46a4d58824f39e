// Community counts and sizes per level (`neoweave status`, the enrich report).
MATCH (c:Community)
RETURN c.level AS level, count(c) AS communities, min(c.size) AS min_size, max(c.size) AS max_size,
       avg(c.size) AS mean_size, sum(CASE WHEN c.summary IS NULL THEN 1 ELSE 0 END) AS without_report,
       sum(CASE WHEN c.summary IS NOT NULL AND c.method = 'llm' THEN 1 ELSE 0 END) AS llm_reports
ORDER BY level
