// The Browser guide's example parameters, read from the graph: the document with the most resolved links, the
// most mentioned entity, the largest community, the paragraph with the most RST edges (a row is missing where
// the graph has none).
MATCH (d:Document)
WHERE d.links_resolved > 0
WITH d
ORDER BY d.links_resolved DESC, d.id
LIMIT 1
RETURN 'doc_id' AS param, d.id AS value
UNION ALL
MATCH (e:Entity)
WITH e
ORDER BY coalesce(e.mention_count, 0) DESC, e.id
LIMIT 1
RETURN 'name' AS param, e.name AS value
UNION ALL
MATCH (m:Community)
WITH m
ORDER BY coalesce(m.size, 0) DESC, m.id
LIMIT 1
RETURN 'community_id' AS param, m.id AS value
UNION ALL
MATCH (c:Chunk)-[r:RST]-()
WITH c, count(r) AS edges
ORDER BY edges DESC, c.id
LIMIT 1
RETURN 'chunk_id' AS param, c.id AS value
