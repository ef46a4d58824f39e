// BM25, step 2: Okapi BM25 of candidate chunks, from the terms' document frequencies (chunk_term_postings).
// A term's frequency in a chunk counts its occurrences at word starts (so 'film' also counts 'films', much as
// the index's stemming matches them), at least 1 where the index listed the chunk for the term.
// @param ids: LIST  candidate chunk ids
// @param postings: LIST  [{term, df, top}] as chunk_term_postings returns them
// @param chunks: INTEGER  chunks in the graph (N of the idf)
// @param avg_tokens: FLOAT  mean chunk length in tokens
// @param k1: FLOAT  term-frequency saturation
// @param b: FLOAT  length normalisation
// @param k: INTEGER  chunks to return
UNWIND $ids AS id
MATCH (c:Chunk {id: id})
WITH c, ' ' + replace(replace(toLower(c.text), '\n', ' '), '(', ' ') AS text
UNWIND $postings AS p
WITH c, p, size(split(text, ' ' + p.term)) - 1 AS occurrences
WITH c, p, CASE WHEN occurrences = 0 AND c.id IN p.top THEN 1 ELSE occurrences END AS tf
WHERE tf > 0
WITH c, sum(log(1 + ($chunks - p.df + 0.5) / (p.df + 0.5)) * tf * ($k1 + 1)
            / (tf + $k1 * (1 - $b + $b * coalesce(c.token_count, $avg_tokens) / $avg_tokens))) AS score
// ties: the score to 1e-6, then the key; sorted by a variable (FalkorDB sorts a RETURN by nothing when its ORDER BY
// repeats an earlier ORDER BY's expression, as the vector search macro and a LIMIT before it would)
WITH c, score, round(score * 1000000) AS rounded_score
ORDER BY rounded_score DESC, c.id
LIMIT $k
MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS chunk_id, c.text AS text, c.doc_id AS doc_id, s.id AS section_id, s.title AS section_title,
       s.url AS url, c.token_count AS token_count, c.tag_path AS tag_path, score
ORDER BY rounded_score DESC, chunk_id
