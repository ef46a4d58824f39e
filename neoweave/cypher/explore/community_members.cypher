// A Leiden community: its report's title, its member entities and the relations among them.
// @param community_id: STRING  a community id (neoweave communities list)
MATCH (m:Community {id: $community_id})<-[member:IN_COMMUNITY]-(e:Entity)
OPTIONAL MATCH (e)-[r:RELATED]->(o:Entity)-[:IN_COMMUNITY]->(m)
RETURN m, member, e, r, o, m.title AS community, e.name AS entity, r.type AS relation, o.name AS related
LIMIT 300
