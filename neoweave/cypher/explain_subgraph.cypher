// explain --cypher: draws a retrieval's subgraph in Neo4j Browser (paste the `:params` line `neoweave explain
// --cypher` prints, then this). The same edges as explain_relationships, returned as graph elements, and the
// trace's nodes that no edge reaches (a community of global search).
// @param edges: LIST  [{source, type, target}] from the trace (a tag edge's target is the tag name)
// @param nodes: LIST  [{label, id}] nodes to draw on their own
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'HAS_SECTION'
MATCH (a:Document {id: edge.source})-[r:HAS_SECTION]->(b:Section {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'HAS_CHUNK'
MATCH (a:Section {id: edge.source})-[r:HAS_CHUNK]->(b:Chunk {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'NEXT_CHUNK'
MATCH (a:Chunk {id: edge.source})-[r:NEXT_CHUNK]->(b:Chunk {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'LINKS_TO'
MATCH (a:Section {id: edge.source})-[r:LINKS_TO]->(b:Section {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'MENTIONS'
MATCH (a:Chunk {id: edge.source})-[r:MENTIONS]->(b:Entity {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'RELATED'
MATCH (a:Entity {id: edge.source})-[r:RELATED]->(b:Entity {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'DESCRIBED_BY'
MATCH (a:Entity {id: edge.source})-[r:DESCRIBED_BY]->(b:Section {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'RST'
MATCH (a:Chunk {id: edge.source})-[r:RST]->(b:Chunk {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'IN_COMMUNITY'
MATCH (a:Entity {id: edge.source})-[r:IN_COMMUNITY]->(b:Community {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'PARENT_COMMUNITY'
MATCH (a:Community {id: edge.source})-[r:PARENT_COMMUNITY]->(b:Community {id: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'TAGGED'
MATCH (a:Chunk {id: edge.source})-[r:TAGGED]->(b:Tag {name: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $edges AS edge
WITH edge WHERE edge.type = 'TAGGED'
MATCH (a:Document {id: edge.source})-[r:TAGGED]->(b:Tag {name: edge.target})
RETURN a, r, b
UNION ALL
UNWIND $nodes AS node
WITH node WHERE node.label = 'Chunk'
MATCH (a:Chunk {id: node.id})
RETURN a, null AS r, null AS b
UNION ALL
UNWIND $nodes AS node
WITH node WHERE node.label = 'Section'
MATCH (a:Section {id: node.id})
RETURN a, null AS r, null AS b
UNION ALL
UNWIND $nodes AS node
WITH node WHERE node.label = 'Document'
MATCH (a:Document {id: node.id})
RETURN a, null AS r, null AS b
UNION ALL
UNWIND $nodes AS node
WITH node WHERE node.label = 'Entity'
MATCH (a:Entity {id: node.id})
RETURN a, null AS r, null AS b
UNION ALL
UNWIND $nodes AS node
WITH node WHERE node.label = 'Community'
MATCH (a:Community {id: node.id})
RETURN a, null AS r, null AS b
