// explain: the stored relationships behind a retrieval's trace, each with what a view shows of it (a link's
// text and context, a relation's type and description, an RST relation and its reason, a weight, the method that
// made it). One branch per relationship type of the schema, both ends matched by label and key.
// @param edges: LIST  [{source, type, target}] from the trace (a tag edge's target is the tag name)
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'HAS_SECTION'
MATCH (a:Document {id: edge.source})-[r:HAS_SECTION]->(b:Section {id: edge.target})
RETURN edge.source AS source, 'HAS_SECTION' AS type, edge.target AS target, '' AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'HAS_CHUNK'
MATCH (a:Section {id: edge.source})-[r:HAS_CHUNK]->(b:Chunk {id: edge.target})
RETURN edge.source AS source, 'HAS_CHUNK' AS type, edge.target AS target, '' AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'NEXT_CHUNK'
MATCH (a:Chunk {id: edge.source})-[r:NEXT_CHUNK]->(b:Chunk {id: edge.target})
RETURN edge.source AS source, 'NEXT_CHUNK' AS type, edge.target AS target, '' AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'LINKS_TO'
MATCH (a:Section {id: edge.source})-[r:LINKS_TO]->(b:Section {id: edge.target})
RETURN edge.source AS source, 'LINKS_TO' AS type, edge.target AS target, coalesce(r.text, '') + ': ' + coalesce(r.context, '') AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'MENTIONS'
MATCH (a:Chunk {id: edge.source})-[r:MENTIONS]->(b:Entity {id: edge.target})
RETURN edge.source AS source, 'MENTIONS' AS type, edge.target AS target,
       reduce(text = '', form IN coalesce(r.names, [coalesce(r.name, '')]) |
              text + CASE WHEN text = '' THEN form ELSE ' / ' + form END) AS detail,
       r.count AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'RELATED'
MATCH (a:Entity {id: edge.source})-[r:RELATED]->(b:Entity {id: edge.target})
RETURN edge.source AS source, 'RELATED' AS type, edge.target AS target, coalesce(r.type, '') + ': ' + coalesce(r.description, '') AS detail,
       r.weight AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'DESCRIBED_BY'
MATCH (a:Entity {id: edge.source})-[r:DESCRIBED_BY]->(b:Section {id: edge.target})
RETURN edge.source AS source, 'DESCRIBED_BY' AS type, edge.target AS target, coalesce(r.rule, '') AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'RST'
MATCH (a:Chunk {id: edge.source})-[r:RST]->(b:Chunk {id: edge.target})
RETURN edge.source AS source, 'RST' AS type, edge.target AS target, coalesce(r.relation, '') + ': ' + coalesce(r.reason, '') AS detail,
       r.weight AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'IN_COMMUNITY'
MATCH (a:Entity {id: edge.source})-[r:IN_COMMUNITY]->(b:Community {id: edge.target})
RETURN edge.source AS source, 'IN_COMMUNITY' AS type, edge.target AS target, '' AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'PARENT_COMMUNITY'
MATCH (a:Community {id: edge.source})-[r:PARENT_COMMUNITY]->(b:Community {id: edge.target})
RETURN edge.source AS source, 'PARENT_COMMUNITY' AS type, edge.target AS target, '' AS detail,
       null AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'TAGGED'
MATCH (a:Chunk {id: edge.source})-[r:TAGGED]->(b:Tag {name: edge.target})
RETURN edge.source AS source, 'TAGGED' AS type, edge.target AS target, coalesce(r.method, '') AS detail,
       r.weight AS weight, r.method AS method
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'TAGGED'
MATCH (a:Document {id: edge.source})-[r:TAGGED]->(b:Tag {name: edge.target})
RETURN edge.source AS source, 'TAGGED' AS type, edge.target AS target, coalesce(r.method, '') AS detail,
       r.weight AS weight, r.method AS method
