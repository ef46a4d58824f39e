// Integrity checks: the graph's invariants (docs/enrich/kg.md), one row per check with how many fail it (0 on a
// healthy graph) and up to five of them. What a strategy cannot use (a chunk without its text or embedding, a
// link without the context embedding larag and ppr rank it by: they skip it); nodes without their parent or
// purpose (chunk without section, section without document, entity no chunk mentions unless imported, tag on nothing, community without members or
// sub-communities); evidence that is gone or out of step (a relation's chunk_ids naming a deleted chunk, its
// parallel evidence lists of different lengths, empty, or a weight that is not their sum; a mention edge's
// surface-form lists likewise; an entity whose stored mention or relation count is not what its edges hold
// (`kg_refresh_entities_of`); an inferred link whose chunk no longer mentions the entity homed at its target; a
// community report citing a deleted chunk); communities whose stored size disagrees with their member edges, or
// whose report is older than a change to a member (listed in the communities state node's `members_changed` by
// the kg writes, removed when the report is rewritten); and anything held twice that a key should keep single (an entity per id, an entity per type
// group and key: its id is group:key; one MENTIONS per chunk and entity; one RELATED per ends and type; ...).
// `repair`: the one command that repairs a failing check, where one does (`neoweave check` prints it); what it
// flags is not served meanwhile (a chunk, link or report a strategy cannot use is skipped and noted in its trace).
MATCH (c:Chunk)
WHERE NOT (c)<-[:HAS_CHUNK]-(:Section)
WITH count(c) AS failing, collect(c.id)[0..5] AS examples
RETURN 'chunk without section' AS check, failing, examples, null AS repair
UNION ALL
MATCH (c:Chunk)
WHERE c.embedding IS NULL OR c.text IS NULL
WITH count(c) AS failing, collect(c.id)[0..5] AS examples
RETURN 'chunk without its text or embedding' AS check, failing, examples, 'neoweave ingest PATH again (a complete document: neoweave delete PATH, then ingest PATH)' AS repair
UNION ALL
MATCH (s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.context_embedding IS NULL
WITH count(l) AS failing, collect(s.id + ' -> ' + t.id)[0..5] AS examples
RETURN 'link without its context embedding' AS check, failing, examples, 'neoweave ingest PATH (or sync PATH) again, or neoweave enrich kg' AS repair
UNION ALL
MATCH (s:Section)
WHERE NOT (s)<-[:HAS_SECTION]-(:Document)
WITH count(s) AS failing, collect(s.id)[0..5] AS examples
RETURN 'section without document' AS check, failing, examples, null AS repair
UNION ALL
MATCH (e:Entity)
WHERE NOT (e)<-[:MENTIONS]-(:Chunk) AND coalesce(e.method, '') <> 'import'
WITH count(e) AS failing, collect(e.id)[0..5] AS examples
RETURN 'entity without mention' AS check, failing, examples, null AS repair
UNION ALL
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
UNWIND coalesce(r.chunk_ids, [r.chunk_id]) AS evidence
OPTIONAL MATCH (c:Chunk {id: evidence})
WITH a, b, r, evidence, c
WHERE c IS NULL
WITH count(DISTINCT r) AS failing, collect(a.id + ' -> ' + b.id + ' cites ' + evidence)[0..5] AS examples
RETURN 'relation citing a deleted chunk' AS check, failing, examples, null AS repair
UNION ALL
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
WITH a, b, r, CASE WHEN r.chunk_ids IS NULL THEN 1 ELSE size(r.chunk_ids) END AS chunks
WHERE chunks = 0 OR r.weight IS NULL
   OR (chunks = 1 AND (r.chunk_id IS NULL OR r.chunk_ids IS NOT NULL OR r.chunk_weights IS NOT NULL
                       OR r.descriptions IS NOT NULL))
   OR (chunks > 1 AND (r.chunk_id IS NOT NULL OR chunks <> size(coalesce(r.chunk_weights, []))
                       OR chunks <> size(coalesce(r.descriptions, []))
                       OR abs(r.weight - reduce(total = 0.0, w IN coalesce(r.chunk_weights, []) | total + w))
                          > 0.000001))
WITH count(r) AS failing, collect(a.id + ' -' + coalesce(r.type, '') + '-> ' + b.id)[0..5] AS examples
RETURN 'relation evidence out of step' AS check, failing, examples, null AS repair
UNION ALL
MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity)
WITH c, e, m, CASE WHEN m.origin_ids IS NULL THEN 1 ELSE size(m.origin_ids) END AS forms
WHERE forms = 0 OR m.origin_id IS NULL OR m.name IS NULL OR m.method IS NULL OR m.source IS NULL
   OR (forms = 1 AND (m.origin_ids IS NOT NULL OR m.names IS NOT NULL OR m.counts IS NOT NULL
                      OR m.contexts IS NOT NULL OR m.methods IS NOT NULL OR m.sources IS NOT NULL
                      OR m.type IS NULL OR m.context IS NULL))
   OR (forms > 1 AND (forms <> size(coalesce(m.names, [])) OR forms <> size(coalesce(m.counts, []))
                      OR forms <> size(coalesce(m.contexts, [])) OR forms <> size(coalesce(m.methods, []))
                      OR forms <> size(coalesce(m.sources, []))
                      OR coalesce(m.count, -1) <> reduce(total = 0, n IN coalesce(m.counts, []) | total + n)))
WITH count(m) AS failing, collect(c.id + ' -> ' + e.id)[0..5] AS examples
RETURN 'mention forms out of step' AS check, failing, examples, null AS repair
UNION ALL
MATCH (e:Entity)
WHERE e.mention_count IS NOT NULL OR e.relation_count IS NOT NULL
OPTIONAL MATCH (e)<-[m:MENTIONS]-(:Chunk)
WITH e, sum(m.count) AS mentions
OPTIONAL MATCH (e)-[r:RELATED]-()
WITH e, mentions, count(r) AS relations
WHERE coalesce(e.mention_count, -1) <> mentions OR coalesce(e.relation_count, -1) <> relations
WITH count(e) AS failing, collect(e.id + ' counts ' + toString(e.mention_count) + '/' + toString(e.relation_count)
                                  + ', has ' + toString(mentions) + '/' + toString(relations))[0..5] AS examples
RETURN 'entity counts out of step' AS check, failing, examples, 'neoweave enrich kg' AS repair
UNION ALL
MATCH (s:Section)-[l:LINKS_TO]->(t:Section)
WHERE l.method = 'inferred'
OPTIONAL MATCH (s)-[:HAS_CHUNK]->(c:Chunk {id: l.chunk_id})-[:MENTIONS]->(e:Entity {id: l.entity_id})-[:DESCRIBED_BY]->(t)
WITH s, t, l, count(e) AS evidence
WHERE evidence = 0
WITH count(l) AS failing, collect(s.id + ' -> ' + t.id + ' via ' + coalesce(l.entity_id, '?'))[0..5] AS examples
RETURN 'inferred link whose evidence is gone' AS check, failing, examples, 'neoweave enrich kg' AS repair
UNION ALL
MATCH (m:Community)
UNWIND coalesce(m.chunk_ids, []) AS evidence
OPTIONAL MATCH (c:Chunk {id: evidence})
WITH m, evidence, c
WHERE c IS NULL
WITH count(DISTINCT m) AS failing, collect(m.id + ' cites ' + evidence)[0..5] AS examples
RETURN 'community report citing a deleted chunk' AS check, failing, examples, 'neoweave enrich communities' AS repair
UNION ALL
MATCH (m:Community)
WHERE m.size IS NOT NULL
OPTIONAL MATCH (m)<-[:PARENT_COMMUNITY*0..]-(:Community)<-[:IN_COMMUNITY]-(e:Entity)
WITH m, count(DISTINCT e) AS members
WHERE members <> m.size
WITH count(m) AS failing, collect(m.id + ' size ' + toString(m.size) + ', members ' + toString(members))[0..5] AS examples
RETURN 'community size disagrees with its members' AS check, failing, examples, 'neoweave enrich communities' AS repair
UNION ALL
MATCH (m:Community)
WHERE m.report_fingerprint IS NOT NULL
OPTIONAL MATCH (state:Meta {id: 'communities'})
WITH m, state
WHERE m.id IN coalesce(state.members_changed, [])
WITH count(m) AS failing, collect(m.id)[0..5] AS examples
RETURN 'community report older than its members' AS check, failing, examples, 'neoweave enrich communities' AS repair
UNION ALL
MATCH (t:Tag)
WHERE NOT (t)<-[:TAGGED]-()
WITH count(t) AS failing, collect(t.name)[0..5] AS examples
RETURN 'tag on nothing' AS check, failing, examples, null AS repair
UNION ALL
MATCH (m:Community)
WHERE NOT (m)<-[:IN_COMMUNITY]-() AND NOT (m)<-[:PARENT_COMMUNITY]-()
WITH count(m) AS failing, collect(m.id)[0..5] AS examples
RETURN 'community without members' AS check, failing, examples, 'neoweave enrich communities' AS repair
UNION ALL
MATCH (e:Entity)
WITH e.id AS id, count(*) AS copies
WHERE copies > 1
WITH count(id) AS failing, collect(id)[0..5] AS examples
RETURN 'entity id held twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (e:Entity)
WITH split(e.id, ':')[0] AS grp, e.key AS k, count(*) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(grp + ':' + coalesce(k, ''))[0..5] AS examples
RETURN 'entity key held twice in a group' AS check, failing, examples, null AS repair
UNION ALL
MATCH (m:Community)
WITH m.id AS id, count(*) AS copies
WHERE copies > 1
WITH count(id) AS failing, collect(id)[0..5] AS examples
RETURN 'community id held twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (c:Chunk)-[r:MENTIONS]->(e:Entity)
WITH c, e, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(c.id + ' -> ' + e.id)[0..5] AS examples
RETURN 'mention edge twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (a:Entity)-[r:RELATED]->(b:Entity)
WITH a, b, r.type AS type, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(a.id + ' -' + type + '-> ' + b.id)[0..5] AS examples
RETURN 'relation edge twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (a:Chunk)-[r:RST]->(b:Chunk)
WITH a, b, r.relation AS relation, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(a.id + ' -' + relation + '-> ' + b.id)[0..5] AS examples
RETURN 'RST edge twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (x)-[r:TAGGED]->(t:Tag)
WITH x, t, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(t.name)[0..5] AS examples
RETURN 'tag edge twice' AS check, failing, examples, null AS repair
UNION ALL
MATCH (e:Entity)-[r:IN_COMMUNITY]->(m:Community)
WITH e, m, count(r) AS copies
WHERE copies > 1
WITH count(*) AS failing, collect(e.id + ' in ' + m.id)[0..5] AS examples
RETURN 'membership edge twice' AS check, failing, examples, null AS repair
