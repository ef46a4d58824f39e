// (:Chunk)-[:MENTIONS]->(:Entity), one edge per chunk and entity, holding the surface forms the chunk mentions the
// entity by, one per origin entity (the entity a form was extracted as: `group:key`), so a merge can be undone
// exactly. An edge of one form (99 % of them) holds that form as scalars: origin_id, name, type (the extractor's
// type; '' when not kept), count, context, method, source. An edge of two or more forms holds them as parallel
// lists, origin_ids, names, types, counts, contexts, methods, sources (FalkorDB stores no null in a list), with
// `count` their total and `name`, `method`, `source` and `origin_id` those of one form: the entity's own form,
// else the smallest origin id (not the first to arrive: the same whether a merge came before the chunk or after
// it); its context is `contexts` at the index of `origin_id`. FalkorDB pays ~40 bytes a property on each edge
// whatever it holds: the lists on one-form edges were 98 MB of the Python docs graph's 535. Readers see both
// shapes as lists: coalesce(m.names, [m.name]), coalesce(m.types, [coalesce(m.type, '')]), ... An origin already
// on the edge is replaced (a rewrite is idempotent).
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
ON CREATE SET m.created_at = $now
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
WITH m, e, row, coalesce(m.origin_ids, [origin IN [m.origin_id] WHERE origin IS NOT NULL]) AS had,
     coalesce(m.names, [m.name]) AS had_names, coalesce(m.types, [coalesce(m.type, '')]) AS had_types,
     coalesce(m.counts, [m.count]) AS had_counts, coalesce(m.contexts, [m.context]) AS had_contexts,
     coalesce(m.methods, [m.method]) AS had_methods, coalesce(m.sources, [m.source]) AS had_sources
WITH m, e, row, had, had_names, had_types, had_counts, had_contexts, had_methods, had_sources,
     [i IN range(0, size(had) - 1) WHERE NOT had[i] IN row.origin_ids] AS keep
WITH m, e,
     [i IN keep | had[i]] + row.origin_ids AS origin_ids,
     [i IN keep | had_names[i]] + row.names AS names,
     [i IN keep | coalesce(had_types[i], '')] + coalesce(row.types, [origin IN row.origin_ids | '']) AS types,
     [i IN keep | had_counts[i]] + row.counts AS counts,
     [i IN keep | had_contexts[i]] + row.contexts AS contexts,
     [i IN keep | had_methods[i]] + row.methods AS methods,
     [i IN keep | had_sources[i]] + [origin IN row.origin_ids | $source] AS sources
WITH m, origin_ids, names, types, counts, contexts, methods, sources, size(origin_ids) = 1 AS one_form,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = e.id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first
SET m.count = reduce(total = 0, n IN counts | total + n), m.name = names[first], m.method = methods[first],
    m.source = sources[first], m.origin_id = origin_ids[first],
    m.type = CASE WHEN one_form THEN coalesce(types[0], '') ELSE null END,
    m.context = CASE WHEN one_form THEN contexts[0] ELSE null END,
    m.origin_ids = CASE WHEN one_form THEN null ELSE origin_ids END,
    m.names = CASE WHEN one_form THEN null ELSE names END,
    m.types = CASE WHEN one_form THEN null ELSE types END,
    m.counts = CASE WHEN one_form THEN null ELSE counts END,
    m.contexts = CASE WHEN one_form THEN null ELSE contexts END,
    m.methods = CASE WHEN one_form THEN null ELSE methods END,
    m.sources = CASE WHEN one_form THEN null ELSE sources END
