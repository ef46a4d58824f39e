// `neoweave communities show`: one community's report, its parent and sub-communities.
// @param id: STRING  the community
MATCH (c:Community {id: $id})
OPTIONAL MATCH (c)-[:PARENT_COMMUNITY]->(p:Community)
OPTIONAL MATCH (child:Community)-[:PARENT_COMMUNITY]->(c)
RETURN c.id AS id, c.level AS level, c.size AS size, c.rating AS rating, c.title AS title,
       c.full_report AS full_report, c.method AS method, p.id AS parent_id, collect(child.id) AS children
