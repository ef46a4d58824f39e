// Integrity checks: nodes without their parent or purpose (chunk without section, section without document,
// entity no chunk mentions, tag on nothing, community without members or sub-communities), facts citing evidence
// that is gone (a relation whose chunk_ids name a deleted chunk), and anything held twice that a MERGE key should
// keep single. One row per check with how many fail it (0 on a healthy graph) and
// up to five of them.
MATCH (c:Chunk)
WHERE NOT (c)<-[:HAS_CHUNK]-(:Section)
WITH count(c) AS failing, collect(c.id)[0..5] AS examples
RETURN 'chunk without section' AS check, failing, examples
UNION ALL
MATCH (s:Section)
WHERE NOT (s)<-[:HAS_SECTION]-(:Document)
WITH count(s) AS failing, collect(s.id)[0..5] AS examples
RETURN 'section without document' AS check, failing, examples
UNION ALL
MATCH (e:Entity)
WHERE NOT (e)<-[:MENTIONS]-(:Chunk)
WITH count(e) AS failing, collect(e.id)[0..5] AS examples
RETURN 'entity without mention' AS check, failing, examples
UNION ALL
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
UNWIND r.chunk_ids AS evidence
OPTIONAL MATCH (c:Chunk {id: evidence})
WITH a, b, r, evidence, c
WHERE c IS NULL
WITH count(DISTINCT r) AS failing, collect(a.id + ' -> ' + b.id + ' cites ' + evidence)[0..5] AS examples
RETURN 'relation citing a deleted chunk' AS check, failing, examples
UNION ALL
MATCH (t:Tag)
WHERE NOT (t)<-[:TAGGED]-()
WITH count(t) AS failing, collect(t.name)[0..5] AS examples
RETURN 'tag on nothing' AS check, failing, examples
UNION ALL
MATCH (m:Community)
WHERE NOT (m)<-[:IN_COMMUNITY]-() AND NOT (m)<-[:PARENT_COMMUNITY]-()
WITH count(m) AS failing, collect(m.id)[0..5] AS examples
RETURN 'community without members' AS check, failing, examples
UNION ALL
MATCH (e:Entity)
WITH e.id AS id, count(*) AS copies
WHERE copies > 1
WITH count(id) AS failing, collect(id)[0..5] AS examples
RETURN 'entity id held twice' AS check, failing, examples
UNION ALL
MATCH (m:Community)
WITH m.id AS id, count(*) AS copies
WHERE copies > 1
WITH count(id) AS failing, collect(id)[0..5] AS examples
RETURN 'community id held twice' AS check, failing, examples
UNION ALL
MATCH (c:Chunk)-[r:MENTIONS]->(e:Entity)
WITH c, e, r.origin_id AS origin, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(c.id + ' -> ' + e.id)[0..5] AS examples
RETURN 'mention edge twice' AS check, failing, examples
UNION ALL
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
WITH a, b, r.type AS type, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(a.id + ' -' + type + '-> ' + b.id)[0..5] AS examples
RETURN 'relation edge twice' AS check, failing, examples
UNION ALL
MATCH (a:Chunk)-[r:RST]->(b:Chunk)
WITH a, b, r.relation AS relation, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(a.id + ' -' + relation + '-> ' + b.id)[0..5] AS examples
RETURN 'RST edge twice' AS check, failing, examples
UNION ALL
MATCH (x)-[r:TAGGED]->(t:Tag)
WITH x, t, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(t.name)[0..5] AS examples
RETURN 'tag edge twice' AS check, failing, examples
UNION ALL
MATCH (e:Entity)-[r:IN_COMMUNITY]->(m:Community)
WITH e, m, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(e.id + ' in ' + m.id)[0..5] AS examples
RETURN 'membership edge twice' AS check, failing, examples
