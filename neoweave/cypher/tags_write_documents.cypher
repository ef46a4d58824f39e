// Tags: the master tags of documents, written by a machine method; an edge a user made (added or removed) is left as it is.
// @param rows: LIST  [{id, method, tags: [{name, rank, weight}]}]  (method: the step's, or fast where
//   the model gave no usable answer and the fast method stood in)
// @param source: STRING  the enrich signature
// @param now: STRING  ISO time
UNWIND $rows AS row
MATCH (x:Document {id: row.id})
UNWIND row.tags AS tag
MERGE (t:Tag {name: tag.name})
ON CREATE SET t.created_at = $now
MERGE (x)-[r:TAGGED]->(t)
FOREACH (_ IN CASE WHEN coalesce(r.method, '') = 'user' THEN [] ELSE [1] END |
  SET r.rank = tag.rank, r.weight = tag.weight, r.method = row.method, r.source = $source, r.created_at = $now)
