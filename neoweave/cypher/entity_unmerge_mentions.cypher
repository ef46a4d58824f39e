// Undo a merge, second statement: the survivor's mention entries whose origin the absorbed entity stood for go
// back to it, one edge per chunk (the survivor's edge keeps its other forms; one emptied is deleted by
// `entity_unmerge_empty_mentions`). Run after `entity_unmerge` restored the entity, on folded edges
// (`kg_fold_mentions`). Both edges' shapes (scalars for one form, lists for more; a survivor's edge left without a
// form keeps empty lists) and one-form scalars by kg_create_mentions' rule (own form, else smallest origin id).
// @param survivor_id: STRING  the survivor's id
// @param absorbed_id: STRING  the restored entity's id
// @param origin_ids: LIST  origin ids the absorbed entity stood for (itself and what it had absorbed)
MATCH (s:Entity {id: $survivor_id})
MATCH (a:Entity {id: $absorbed_id})
WITH s, a
MATCH (c:Chunk)-[m:MENTIONS]->(s)
WITH a, c, m, coalesce(m.origin_ids, [m.origin_id]) AS held
WITH a, c, m, held, [i IN range(0, size(held) - 1) WHERE held[i] IN $origin_ids] AS back
WHERE size(back) > 0
WITH a, c, m, held, back, [i IN range(0, size(held) - 1) WHERE NOT held[i] IN $origin_ids] AS stay,
     coalesce(m.names, [m.name]) AS m_names, coalesce(m.types, [coalesce(m.type, '')]) AS m_types,
     coalesce(m.counts, [toInteger(m.count)]) AS m_counts, coalesce(m.contexts, [m.context]) AS m_contexts,
     coalesce(m.methods, [m.method]) AS m_methods, coalesce(m.sources, [m.source]) AS m_sources
MERGE (c)-[n:MENTIONS]->(a)
ON CREATE SET n.created_at = m.created_at
WITH m, n, held, back, stay, m_names, m_types, m_counts, m_contexts, m_methods, m_sources,
     coalesce(n.origin_ids, [origin IN [n.origin_id] WHERE origin IS NOT NULL]) AS present,
     coalesce(n.names, [n.name]) AS n_names, coalesce(n.types, [coalesce(n.type, '')]) AS n_types,
     coalesce(n.counts, [toInteger(n.count)]) AS n_counts, coalesce(n.contexts, [n.context]) AS n_contexts,
     coalesce(n.methods, [n.method]) AS n_methods, coalesce(n.sources, [n.source]) AS n_sources
WITH m, n, held, back, stay, m_names, m_types, m_counts, m_contexts, m_methods, m_sources, present, n_names,
     n_types, n_counts, n_contexts, n_methods, n_sources,
     [i IN range(0, size(present) - 1) WHERE NOT present[i] IN $origin_ids] AS had
WITH m, n,
     [i IN had | present[i]] + [i IN back | held[i]] AS origin_ids,
     [i IN had | n_names[i]] + [i IN back | m_names[i]] AS names,
     [i IN had | coalesce(n_types[i], '')] + [i IN back | coalesce(m_types[i], '')] AS types,
     [i IN had | n_counts[i]] + [i IN back | m_counts[i]] AS counts,
     [i IN had | n_contexts[i]] + [i IN back | m_contexts[i]] AS contexts,
     [i IN had | n_methods[i]] + [i IN back | m_methods[i]] AS methods,
     [i IN had | n_sources[i]] + [i IN back | m_sources[i]] AS sources,
     [i IN stay | m_counts[i]] AS stay_counts, [i IN stay | m_names[i]] AS stay_names,
     [i IN stay | coalesce(m_types[i], '')] AS stay_types,
     [i IN stay | m_contexts[i]] AS stay_contexts, [i IN stay | m_methods[i]] AS stay_methods,
     [i IN stay | m_sources[i]] AS stay_sources, [i IN stay | held[i]] AS stay_origins
WITH m, n, origin_ids, names, types, counts, contexts, methods, sources, stay_counts, stay_names, stay_types,
     stay_contexts, stay_methods, stay_sources, stay_origins,
     size(origin_ids) = 1 AS one_form, size(stay_origins) = 1 AS stay_one_form,
     coalesce([i IN range(0, size(origin_ids) - 1) WHERE origin_ids[i] = $absorbed_id][0],
              reduce(least = 0, i IN range(0, size(origin_ids) - 1) |
                CASE WHEN origin_ids[i] < origin_ids[least] THEN i ELSE least END)) AS first,
     coalesce([i IN range(0, size(stay_origins) - 1) WHERE stay_origins[i] = $survivor_id][0],
              reduce(least = 0, i IN range(0, size(stay_origins) - 1) |
                CASE WHEN stay_origins[i] < stay_origins[least] THEN i ELSE least END)) AS stay_first
SET n.name = names[first], n.method = methods[first], n.source = sources[first], n.origin_id = origin_ids[first],
    n.count = reduce(total = 0, amount IN counts | total + amount),
    n.type = CASE WHEN one_form THEN coalesce(types[0], '') ELSE null END,
    n.context = CASE WHEN one_form THEN contexts[0] ELSE null END,
    n.origin_ids = CASE WHEN one_form THEN null ELSE origin_ids END,
    n.names = CASE WHEN one_form THEN null ELSE names END,
    n.types = CASE WHEN one_form THEN null ELSE types END,
    n.counts = CASE WHEN one_form THEN null ELSE counts END,
    n.contexts = CASE WHEN one_form THEN null ELSE contexts END,
    n.methods = CASE WHEN one_form THEN null ELSE methods END,
    n.sources = CASE WHEN one_form THEN null ELSE sources END,
    m.count = reduce(total = 0, amount IN stay_counts | total + amount), m.name = stay_names[stay_first],
    m.method = stay_methods[stay_first], m.source = stay_sources[stay_first], m.origin_id = stay_origins[stay_first],
    m.type = CASE WHEN stay_one_form THEN coalesce(stay_types[0], '') ELSE null END,
    m.context = CASE WHEN stay_one_form THEN stay_contexts[0] ELSE null END,
    m.origin_ids = CASE WHEN stay_one_form THEN null ELSE stay_origins END,
    m.names = CASE WHEN stay_one_form THEN null ELSE stay_names END,
    m.types = CASE WHEN stay_one_form THEN null ELSE stay_types END,
    m.counts = CASE WHEN stay_one_form THEN null ELSE stay_counts END,
    m.contexts = CASE WHEN stay_one_form THEN null ELSE stay_contexts END,
    m.methods = CASE WHEN stay_one_form THEN null ELSE stay_methods END,
    m.sources = CASE WHEN stay_one_form THEN null ELSE stay_sources END
RETURN count(n) AS moved
