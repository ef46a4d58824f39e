// Undo a merge: restore the absorbed entity, move back the mentions whose origin it absorbed, give the
// survivor its former aliases, and mark the record undone (resolution never repeats an undone merge).
// @param merge_id: STRING  the EntityMerge id
// @param absorbed: MAP  {id, key, name, type, description, aliases, method, source, created_at}
// @param origin_ids: LIST  origin ids the absorbed entity stood for (itself and what it had absorbed)
// @param survivor_aliases: LIST  the survivor's aliases without the absorbed names
// @param now: STRING  timestamp
MATCH (m:EntityMerge {id: $merge_id})
MATCH (s:Entity {id: m.survivor_id})
MERGE (a:Entity:__Entity__ {id: $absorbed.id})
SET a.key = $absorbed.key, a.name = $absorbed.name, a.type = $absorbed.type, a.description = $absorbed.description,
    a.aliases = $absorbed.aliases, a.aliases_text = reduce(text = '', alias IN $absorbed.aliases | text + alias + ' | '),
    a.method = $absorbed.method, a.source = $absorbed.source, a.created_at = $absorbed.created_at,
    s.aliases = $survivor_aliases,
    s.aliases_text = reduce(text = '', alias IN $survivor_aliases | text + alias + ' | '),
    m.status = 'undone', m.undone_at = $now
WITH s, a
MATCH (c:Chunk)-[old:MENTIONS]->(s)
WHERE old.origin_id IN $origin_ids
MERGE (c)-[back:MENTIONS {origin_id: old.origin_id}]->(a)
SET back.count = old.count, back.name = old.name, back.context = old.context, back.method = old.method,
    back.source = old.source, back.created_at = old.created_at
DELETE old
RETURN count(back) AS moved
