// (:Chunk)-[:MENTIONS]->(:Entity), one edge per chunk and entity. The surface forms the chunk mentions the entity
// by are parallel lists, one entry per origin entity (the entity a form was extracted as: `group:key`), so a merge
// can be undone exactly: origin_ids, names, counts, contexts, methods, sources. An origin already on the edge is
// replaced (a rewrite is idempotent). `count` is the total of `counts`; `name`, `context`, `method`, `source` and
// `origin_id` are those of the first form (what a reader wanting one form reads). Callers send one row per
// (chunk, entity) (`kg_writes.mention_rows`): rows MERGE-ing the same new edge lose each other's SETs on FalkorDB.
// `description` is what the extractor said the entity is in this chunk (the first form's that said anything; the
// entity's own description is that of its smallest chunk id: kg_describe_entities).
// @param rows: LIST  [{chunk_id, entity_id, origin_ids, names, counts, contexts, methods, description}]
// @param source: STRING  the step signature
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:Entity {id: row.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
ON CREATE SET m.origin_ids = [], m.names = [], m.counts = [], m.contexts = [], m.methods = [], m.sources = [],
              m.created_at = $now
SET m.description = coalesce(row.description, m.description)
WITH m, row, coalesce(m.origin_ids, []) AS had
WITH m, row, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN row.origin_ids] AS keep
WITH m,
     [i IN keep | m.origin_ids[i]] + row.origin_ids AS origin_ids,
     [i IN keep | m.names[i]] + row.names AS names,
     [i IN keep | m.counts[i]] + row.counts AS counts,
     [i IN keep | m.contexts[i]] + row.contexts AS contexts,
     [i IN keep | m.methods[i]] + row.methods AS methods,
     [i IN keep | m.sources[i]] + [origin IN row.origin_ids | $source] AS sources
SET m.origin_ids = origin_ids, m.names = names, m.counts = counts, m.contexts = contexts, m.methods = methods,
    m.sources = sources, m.count = reduce(total = 0, n IN counts | total + n), m.name = names[0],
    m.context = contexts[0], m.method = methods[0], m.source = sources[0], m.origin_id = origin_ids[0]
