// An entity's neighbourhood: the entities it is related to (relation type and description on each edge) and the
// chunks that mention it, 50 of each.
// @param name: STRING  the entity's name (matched on its normalised key: lower case)
MATCH (e:Entity {key: toLower(trim($name))})-[r:RELATED]-(other:Entity)
WITH e, r, other
ORDER BY coalesce(r.weight, 1.0) DESC, other.id, r.type
LIMIT 50
RETURN e, r, other, e.name AS entity, r.type AS relation, other.name AS neighbour
UNION ALL
MATCH (e:Entity {key: toLower(trim($name))})<-[r:MENTIONS]-(other:Chunk)
WITH e, r, other
ORDER BY other.id
LIMIT 50
RETURN e, r, other, e.name AS entity, 'MENTIONS' AS relation, other.id AS neighbour
