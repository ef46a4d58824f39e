// community_global's leaf-or-top choice (PankRAG's multi-scale retrieval): per community level, the cosines of
// the reports closest to the question, best first. The question vector is bound once, after the scan. A report
// older than a change to its members (the communities state node's `members_changed`) is withdrawn, as
// global_level_reports withdraws it.
// @param embedding: VECTOR  question embedding
// @param min_rating: FLOAT  reports rated lower are left out
// @param m: INTEGER  cosines returned per level
MATCH (c:Community)
WITH c
WHERE c.full_report IS NOT NULL AND c.embedding IS NOT NULL AND coalesce(c.rating, 0.0) >= $min_rating
WITH collect(c) AS reports, {{vector $embedding}} AS question_vector
OPTIONAL MATCH (state:Meta {id: 'communities'})
WITH reports, question_vector, coalesce(state.members_changed, []) AS changed
UNWIND reports AS c
WITH c, question_vector, changed
WHERE NOT c.id IN changed
WITH c.level AS level, c.id AS id, {{cosine c.embedding question_vector}} AS score
ORDER BY level, round(score * 1000000) DESC, id
WITH level, collect(score) AS scores
RETURN level, scores[..$m] AS best
ORDER BY level
