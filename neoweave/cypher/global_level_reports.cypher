// Community global search: the reports of one level, plus shallower communities not split further (every
// clustered entity covered once), closest to the question first (the caller may keep only the closest).
// The question vector is bound once, after the scan (a scan below a projection would read per row).
// @param level: INTEGER  the community level
// @param min_rating: FLOAT  reports rated lower are left out
// @param embedding: VECTOR  question embedding
// @param limit: INTEGER  the reports closest to the question returned (all: a number above the count)
MATCH (c:Community)
WITH c
WHERE c.full_report IS NOT NULL AND coalesce(c.rating, 0.0) >= $min_rating
  AND (c.level = $level OR (c.level < $level AND coalesce(c.children, 0) = 0))
WITH collect(c) AS reports, {{vector $embedding}} AS question_vector
UNWIND reports AS c
RETURN c.id AS id, c.level AS level, c.title AS title, c.full_report AS full_report, c.rating AS rating,
       c.token_count AS token_count,
       CASE WHEN c.embedding IS NULL THEN 0.0 ELSE {{cosine c.embedding question_vector}} END AS score
ORDER BY score DESC, id
LIMIT $limit
