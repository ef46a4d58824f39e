// Neo4j Browser: one community drawn with its sub-communities, member entities and the relations between
// members (`:param community_id => '...'` then run it; ids from `neoweave communities`).
// @param community_id: STRING  the community
MATCH (c:Community {id: $community_id})
MATCH member = (e:Entity)-[:IN_COMMUNITY]->(:Community)-[:PARENT_COMMUNITY*0..]->(c)
WITH collect(member) AS members, collect(e) AS entities
UNWIND entities AS e
OPTIONAL MATCH relation = (e)-[:RELATED]->(o:Entity)
WITH members, entities, collect(CASE WHEN o IN entities THEN relation END) AS relations
RETURN members, relations
