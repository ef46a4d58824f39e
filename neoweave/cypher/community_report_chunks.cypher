// Community reports: per community, the chunks mentioning the most of its members (with their embeddings,
// for centrality), best first.
// @param rows: LIST  [{community_id, entity_ids}]
// @param per_community: INTEGER  chunks kept per community
UNWIND $rows AS row
UNWIND row.entity_ids AS entity_id
MATCH (c:Chunk)-[:MENTIONS]->(e:Entity {id: entity_id})
WITH row.community_id AS community_id, c, count(e) AS members
ORDER BY members DESC, c.id ASC
WITH community_id, collect([c, members])[0..$per_community] AS best
UNWIND best AS b
WITH community_id, b[0] AS c, b[1] AS members
RETURN community_id, c.id AS chunk_id, c.text AS text, c.embedding AS embedding, members
