// LARAG, one hop: from each frontier section follow at most n_links outgoing links of each kind (authored,
// inferred: the links whose context is closest to the question; a quota per kind, so inferred links add to the
// authored ones instead of crowding them out), and from each link's target section keep the top_m chunks whose embedding is
// closest to the link's context. Visited chunks are excluded, and links without a context embedding (they cannot be
// ranked; the strategy notes them in its trace).
// @param section_ids: LIST  frontier sections (each expanded once)
// @param query_embedding: VECTOR  question embedding
// @param n_links: INTEGER  links followed per section and link kind
// @param top_m: INTEGER  chunks kept per followed link
// @param exclude_chunk_ids: LIST  chunks already in the context (the shared visited set)
// @param methods: LIST  link kinds followed: 'authored' (links without a method are authored), 'inferred'
WITH {{vector $query_embedding}} AS question_vector
UNWIND $section_ids AS section_id
MATCH (s:Section {id: section_id})-[l:LINKS_TO]->(t:Section)
WHERE coalesce(l.method, 'authored') IN $methods AND l.context_embedding IS NOT NULL
WITH s, l, t, coalesce(l.method, 'authored') AS kind, {{cosine l.context_embedding question_vector}} AS link_score
ORDER BY link_score DESC, l.order ASC
WITH s, kind, collect({link: l, target: t, link_score: link_score})[0..$n_links] AS chosen
UNWIND chosen AS pick
WITH s, pick.link AS l, pick.target AS t, pick.link_score AS link_score
MATCH (t)-[:HAS_CHUNK]->(c:Chunk)
WHERE NOT c.id IN $exclude_chunk_ids
WITH s, l, t, link_score, c, {{cosine c.embedding l.context_embedding}} AS chunk_score
ORDER BY chunk_score DESC, c.order ASC
WITH s, l, t, link_score, collect({chunk: c, score: chunk_score})[0..$top_m] AS best
UNWIND best AS b
RETURN s.id AS source_section_id, coalesce(l.method, 'authored') AS link_method, l.order AS link_order, l.text AS link_text, l.context AS link_context,
       link_score, t.id AS section_id, t.title AS section_title, t.url AS url, b.chunk.id AS chunk_id,
       b.chunk.text AS text, b.chunk.doc_id AS doc_id, b.chunk.token_count AS token_count, b.score AS score
