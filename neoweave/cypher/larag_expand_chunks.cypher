// LARAG as published (000 l. 221-232), one hop of its expansion: from each frontier chunk follow the first $n_links
// of its own outgoing links in reading order (a link is the chunk's when its text lies inside the chunk: by the
// link's offset in its section; for a link stored without one, when the chunk's text holds the link text; an
// inferred link is the chunk's whose mention made it), and from each link's target section keep the $top_m chunks
// whose embedding is closest to the link's context, s(c_j | l_i) = cos(e(l_i), e(c_j)). Visited chunks are
// excluded, and links without a context embedding (the strategy notes them in its trace); the question plays no
// part (the paper: relevance comes from the seeds).
// @param chunk_ids: LIST  frontier chunks (each expanded once)
// @param n_links: INTEGER  links followed per chunk
// @param top_m: INTEGER  chunks kept per followed link
// @param exclude_chunk_ids: LIST  chunks already in the context (the shared visited set)
// @param methods: LIST  link kinds followed: 'authored' (links without a method are authored), 'inferred'
UNWIND $chunk_ids AS chunk_id
MATCH (c:Chunk {id: chunk_id})<-[:HAS_CHUNK]-(s:Section)
WITH c, s
MATCH (s)-[l:LINKS_TO]->(t:Section)
WITH c, s, l, t
// (filtered after the MATCH: a WHERE there made FalkorDB scan every section per chunk)
WHERE coalesce(l.method, 'authored') IN $methods AND l.context_embedding IS NOT NULL
  AND CASE WHEN l.chunk_id IS NOT NULL THEN l.chunk_id = c.id
           WHEN l.start IS NOT NULL THEN s.start + l.start >= c.start AND s.start + l.start < c.end
           ELSE l.text <> '' AND c.text CONTAINS l.text END
WITH c, s, l, t
ORDER BY coalesce(l.start, 0) ASC, l.order ASC
WITH c, s, collect({link: l, target: t})[0..$n_links] AS chosen
UNWIND chosen AS pick
WITH c, s, pick.link AS l, pick.target AS t
MATCH (t)-[:HAS_CHUNK]->(o:Chunk)
WHERE NOT o.id IN $exclude_chunk_ids
WITH c, s, l, t, o, {{cosine o.embedding l.context_embedding}} AS chunk_score
ORDER BY chunk_score DESC, o.order ASC
WITH c, s, l, t, collect({chunk: o, score: chunk_score})[0..$top_m] AS best
UNWIND best AS b
RETURN c.id AS source_chunk_id, s.id AS source_section_id, coalesce(l.method, 'authored') AS link_method,
       l.order AS link_order, coalesce(l.start, -1) AS link_start, l.text AS link_text, l.context AS link_context,
       t.id AS section_id, t.title AS section_title, t.url AS url, b.chunk.id AS chunk_id, b.chunk.text AS text,
       b.chunk.doc_id AS doc_id, b.chunk.token_count AS token_count, b.score AS score
