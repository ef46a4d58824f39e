// Inferred links: a section mentioning an entity links to the entity's home, in the shape of an authored link
// (method 'inferred', the mention's surrounding words as context; order < 0 keeps them apart from authored
// links). No inferred link where the author already linked the two sections; an inferred link kept from the last
// run (same order and target) is updated in place, keeping its context embedding.
// @param rows: LIST  [{source_id, target_id, order, text, context, entity_id, chunk_id}]
// @param now: STRING  timestamp (unused by the match, recorded)
UNWIND $rows AS row
MATCH (s:Section {id: row.source_id})
MATCH (t:Section {id: row.target_id})
OPTIONAL MATCH (s)-[authored:LINKS_TO]->(t)
WHERE coalesce(authored.method, 'authored') = 'authored'
WITH s, t, row, count(authored) AS existing
WHERE existing = 0
MERGE (s)-[l:LINKS_TO {order: row.order}]->(t)
SET l.method = 'inferred', l.text = row.text, l.context = row.context, l.entity_id = row.entity_id,
    l.chunk_id = row.chunk_id, l.url = t.url, l.anchor = null, l.created_at = $now
