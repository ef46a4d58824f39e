// Communities stored now: what a run compares its new partition with (same id = same level and members).
MATCH (c:Community)
RETURN c.id AS id, c.level AS level, c.size AS size, c.report_fingerprint AS report_fingerprint
