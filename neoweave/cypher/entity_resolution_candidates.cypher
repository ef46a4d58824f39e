// Every entity with what resolution rules look at: key, name, aliases, mention count, type and method.
MATCH (e:Entity)
RETURN e.id AS id, e.key AS key, e.name AS name, e.aliases AS aliases, coalesce(e.mention_count, 0) AS mentions,
       e.type AS type, e.method AS method
