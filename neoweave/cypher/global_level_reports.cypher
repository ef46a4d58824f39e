// Community global search: the reports of one level, plus shallower communities not split further (every
// clustered entity covered once), closest to the question first (the caller may keep only the closest).
// A report older than a change to its members (the communities state node's `members_changed`) or citing a
// deleted chunk is withdrawn: left out, its id listed in every row's `withdrawn` (with no report left, one row
// with a null id carries them) until `enrich communities` rewrites it.
// The question vector is bound once, after the scan (a scan below a projection would read per row).
// @param level: INTEGER  the community level
// @param min_rating: FLOAT  reports rated lower are left out
// @param embedding: VECTOR  question embedding
// @param limit: INTEGER  the reports closest to the question returned (all: a number above the count)
MATCH (c:Community)
WITH c
WHERE c.full_report IS NOT NULL AND coalesce(c.rating, 0.0) >= $min_rating
  AND (c.level = $level OR (c.level < $level AND coalesce(c.children, 0) = 0))
OPTIONAL MATCH (state:Meta {id: 'communities'})
WITH c, c.id IN coalesce(state.members_changed, []) AS changed
UNWIND CASE WHEN size(coalesce(c.chunk_ids, [])) = 0 THEN [null] ELSE c.chunk_ids END AS cited_id
OPTIONAL MATCH (cited:Chunk {id: cited_id})
WITH c, changed, count(cited_id) AS cites, count(cited) AS found
WITH c, changed OR found < cites AS stale
WITH collect(CASE WHEN stale THEN null ELSE c END) AS reports, collect(CASE WHEN stale THEN c.id END) AS withdrawn,
     {{vector $embedding}} AS question_vector
UNWIND CASE WHEN size(reports) = 0 THEN [null] ELSE reports END AS c
RETURN c.id AS id, c.level AS level, c.title AS title, c.full_report AS full_report, c.rating AS rating,
       c.token_count AS token_count,
       CASE WHEN c.embedding IS NULL THEN 0.0 ELSE {{cosine c.embedding question_vector}} END AS score, withdrawn
ORDER BY score DESC, id
LIMIT $limit
