// (:Chunk)-[:MENTIONS]->(:Entity), one edge per chunk and entity. The surface forms the chunk mentions the entity
// by are parallel lists, one entry per origin entity (the entity a form was extracted as: `group:key`), so a merge
// can be undone exactly: origin_ids, names, types (the extractor's type of each form; '' on edges written before
// types were kept: FalkorDB stores no null in a list), counts, contexts, methods, sources. An origin already on the edge is
// replaced (a rewrite is idempotent). `count` is the total of `counts`; `name`, `method`, `source` and `origin_id`
// are those of one form, what a reader wanting one form reads: the entity's own form, else the smallest origin id
// (not the first to arrive: the same whether a merge came before the chunk or after it). Its context is not copied
// out of `contexts` (the copy was 31 MB of the Python docs graph's 599): readers take
// `contexts` at the index of `origin_id`; the copy an older graph holds is removed when the edge is rewritten.
// Callers send one row per (chunk, entity) (`kg_writes.mention_rows`): rows MERGE-ing the same new edge lose each
// other's SETs on FalkorDB. The description is what the extractor said the entity is in this chunk (the smaller of
// its forms' descriptions; the entity's own description is that of its smallest chunk id: kg_describe_entities).
// A description cut from the chunk's text (the fast method's sentence) is kept as its offsets in that text,
// `description_start` and `description_end` (substring(c.text, start, end - start): 58 MB of text on the Python
// docs graph otherwise); one written by a model, as `description`. Readers cut it with
// substring(CASE WHEN start IS NULL THEN null ELSE c.text END, coalesce(start, 0), coalesce(end - start, 0)):
// FalkorDB evaluates every argument even in a CASE branch not taken, and fails on a null offset.
// @param rows: LIST  [{chunk_id, entity_id, origin_ids, names, types, counts, contexts, methods, description,
//                     description_start, description_end}]
// @param source: STRING  the step signature
// @param now: STRING  timestamp
UNWIND $rows AS row
MATCH (c:Chunk {id: row.chunk_id})
MATCH (e:Entity {id: row.entity_id})
MERGE (c)-[m:MENTIONS]->(e)
ON CREATE SET m.origin_ids = [], m.names = [], m.types = [], m.counts = [], m.contexts = [], m.methods = [],
              m.sources = [], m.created_at = $now
WITH c, m, e, row,
     coalesce(m.description, substring(CASE WHEN m.description_start IS NULL THEN null ELSE c.text END,
                               coalesce(m.description_start, 0),
                               coalesce(m.description_end - m.description_start, 0)))
       AS held
WITH m, e, row, row.description IS NOT NULL AND (held IS NULL OR row.description < held) AS described
SET m.description = CASE WHEN NOT described THEN m.description
                         WHEN row.description_start IS NULL THEN row.description ELSE null END,
    m.description_start = CASE WHEN described THEN row.description_start ELSE m.description_start END,
    m.description_end = CASE WHEN described THEN row.description_end ELSE m.description_end END
WITH m, e, row, coalesce(m.origin_ids, []) AS had
WITH m, e, row, [i IN range(0, size(had) - 1) WHERE NOT had[i] IN row.origin_ids] AS keep
WITH m, e,
     [i IN keep | m.origin_ids[i]] + row.origin_ids AS origin_ids,
     [i IN keep | m.names[i]] + row.names AS names,
     [i IN keep | coalesce(m.types[i], '')] + coalesce(row.types, [origin IN row.origin_ids | '']) AS types,
     [i IN keep | m.counts[i]] + row.counts AS counts,
     [i IN keep | m.contexts[i]] + row.contexts AS contexts,
     [i IN keep | m.methods[i]] + row.methods AS methods,
     [i IN keep | m.sources[i]] + [origin IN row.origin_ids | $source] AS sources
WITH m, origin_ids, names, types, counts, contexts, methods, sources,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = e.id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first
SET m.origin_ids = origin_ids, m.names = names, m.types = types, m.counts = counts, m.contexts = contexts, m.methods = methods,
    m.sources = sources, m.count = reduce(total = 0, n IN counts | total + n), m.name = names[first],
    m.context = null, m.method = methods[first], m.source = sources[first],
    m.origin_id = origin_ids[first]
