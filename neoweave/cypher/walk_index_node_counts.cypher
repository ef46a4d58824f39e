// The walk index build's progress total: node counts of the labels it pages through (a label count each, which
// both backends answer without a scan; `store.counts()` reads every node and edge).
MATCH (c:Chunk)
RETURN 'Chunk' AS label, count(c) AS nodes
UNION ALL
MATCH (e:Entity)
RETURN 'Entity' AS label, count(e) AS nodes
UNION ALL
MATCH (s:Section)
RETURN 'Section' AS label, count(s) AS nodes
