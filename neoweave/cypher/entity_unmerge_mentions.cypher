// Undo a merge, second statement: the survivor's mention entries whose origin the absorbed entity stood for go
// back to it, one edge per chunk (the survivor's edge keeps its other forms; one emptied is deleted by
// `entity_unmerge_empty_mentions`). Run after `entity_unmerge` restored the entity, on folded edges
// (`kg_fold_mentions`). One-form scalars by kg_create_mentions' rule (own form, else smallest origin id).
// @param survivor_id: STRING  the survivor's id
// @param absorbed_id: STRING  the restored entity's id
// @param origin_ids: LIST  origin ids the absorbed entity stood for (itself and what it had absorbed)
MATCH (s:Entity {id: $survivor_id})
MATCH (a:Entity {id: $absorbed_id})
WITH s, a
MATCH (c:Chunk)-[m:MENTIONS]->(s)
WITH a, c, m, [i IN range(0, size(m.origin_ids) - 1) WHERE m.origin_ids[i] IN $origin_ids] AS back
WHERE size(back) > 0
WITH a, c, m, back, [i IN range(0, size(m.origin_ids) - 1) WHERE NOT m.origin_ids[i] IN $origin_ids] AS stay
MERGE (c)-[n:MENTIONS]->(a)
ON CREATE SET n.origin_ids = [], n.names = [], n.types = [], n.counts = [], n.contexts = [], n.methods = [],
              n.sources = [], n.created_at = m.created_at
WITH m, n, back, stay, coalesce(n.origin_ids, []) AS present
WITH m, n, back, stay, [i IN range(0, size(present) - 1) WHERE NOT present[i] IN $origin_ids] AS had
WITH m, n, stay,
     [i IN had | n.origin_ids[i]] + [i IN back | m.origin_ids[i]] AS origin_ids,
     [i IN had | n.names[i]] + [i IN back | m.names[i]] AS names,
     [i IN had | coalesce(n.types[i], '')] + [i IN back | coalesce(m.types[i], '')] AS types,
     [i IN had | n.counts[i]] + [i IN back | m.counts[i]] AS counts,
     [i IN had | n.contexts[i]] + [i IN back | m.contexts[i]] AS contexts,
     [i IN had | n.methods[i]] + [i IN back | m.methods[i]] AS methods,
     [i IN had | n.sources[i]] + [i IN back | m.sources[i]] AS sources,
     [i IN stay | m.counts[i]] AS stay_counts, [i IN stay | m.names[i]] AS stay_names,
     [i IN stay | coalesce(m.types[i], '')] AS stay_types,
     [i IN stay | m.contexts[i]] AS stay_contexts, [i IN stay | m.methods[i]] AS stay_methods,
     [i IN stay | m.sources[i]] AS stay_sources, [i IN stay | m.origin_ids[i]] AS stay_origins
WITH m, n, origin_ids, names, types, counts, contexts, methods, sources, stay_counts, stay_names, stay_types,
     stay_contexts,
     stay_methods, stay_sources, stay_origins,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = $absorbed_id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first,
     coalesce([i IN range(0, size(stay_origins) - 1) WHERE stay_origins[i] = $survivor_id][0],
              reduce(least = 0, i IN range(0, size(stay_origins) - 1) |
                CASE WHEN stay_origins[i] < stay_origins[least] THEN i ELSE least END)) AS stay_first
SET n.origin_ids = origin_ids, n.names = names, n.types = types, n.counts = counts, n.contexts = contexts, n.methods = methods,
    n.sources = sources, n.count = reduce(total = 0, k IN counts | total + k), n.name = names[first],
    n.context = null, n.method = methods[first], n.source = sources[first],
    n.origin_id = origin_ids[first],
    m.origin_ids = stay_origins, m.names = stay_names, m.types = stay_types, m.counts = stay_counts, m.contexts = stay_contexts,
    m.methods = stay_methods, m.sources = stay_sources, m.count = reduce(total = 0, k IN stay_counts | total + k),
    m.name = stay_names[stay_first], m.context = null, m.method = stay_methods[stay_first],
    m.source = stay_sources[stay_first], m.origin_id = stay_origins[stay_first]
RETURN count(n) AS moved
