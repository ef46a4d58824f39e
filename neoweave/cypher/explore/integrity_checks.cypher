// Integrity checks: chunks without a section, sections without a document, entities no chunk mentions, tags on
// nothing. One row per check with how many nodes fail it (0 on a healthy graph) and up to five of them.
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
MATCH (t:Tag)
WHERE NOT (t)<-[:TAGGED]-()
WITH count(t) AS failing, collect(t.name)[0..5] AS examples
RETURN 'tag on nothing' AS check, failing, examples
