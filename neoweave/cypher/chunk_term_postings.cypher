// BM25, step 1: each query term searched alone in the chunk text index: its document frequency and the chunks
// where it weighs most. One term per query keeps the store's own scorer out of the ranking (FalkorDB's TF-IDF
// over an any-word query ranked chunks repeating common words above the one naming a rare word).
// @param terms: LIST  lower-case words of the query (never raw user syntax)
// @param per_term: INTEGER  chunks kept per term, best first (the BM25 candidates)
UNWIND $terms AS term
{{fulltext_nodes chunk_text term}}
WITH term, node, round(score * 1000000) AS rounded_score
ORDER BY rounded_score DESC, node.id
WITH term, collect(node.id) AS hits
RETURN term, size(hits) AS df, hits[..$per_term] AS top
