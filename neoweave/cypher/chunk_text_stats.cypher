// BM25's collection statistics: how many chunks, and their mean length in tokens (read once, then cached).
MATCH (c:Chunk)
RETURN count(c) AS chunks, avg(c.token_count) AS avg_tokens
