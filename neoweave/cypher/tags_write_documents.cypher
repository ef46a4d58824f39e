// Tags: the master tags of documents, written by a machine method; an edge a user made (added or removed) is left as it is.
// @param rows: LIST  [{id, tags: [{name, rank, weight}]}]
// @param method: STRING  fast | llm
// @param source: STRING  the enrich signature
// @param now: STRING  ISO time
UNWIND $rows AS row
MATCH (x:Document {id: row.id})
UNWIND row.tags AS tag
MERGE (t:Tag {name: tag.name})
ON CREATE SET t.created_at = $now
MERGE (x)-[r:TAGGED]->(t)
FOREACH (_ IN CASE WHEN coalesce(r.method, '') = 'user' THEN [] ELSE [1] END |
  SET r.rank = tag.rank, r.weight = tag.weight, r.method = $method, r.source = $source, r.created_at = $now)
