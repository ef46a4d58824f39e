// Undo a merge, first of three statements (run in one unit): restore the absorbed entity, give the survivor its
// former aliases (when it still exists), and mark the record undone (resolution never repeats an undone merge).
// `entity_unmerge_mentions` then moves the mentions back and `entity_unmerge_empty_mentions` deletes the survivor's
// edges left without a form. Separate statements, each writing only after its last MATCH/WHERE: SETs followed by
// a MATCH/WHERE that drops rows is the shape in which FalkorDB has lost updates (kg_forget_relations,
// kg_refresh_entities_of); the single statement this was had it.
// @param merge_id: STRING  the EntityMerge id
// @param absorbed: MAP  {id, key, name, type, description, aliases, method, source, created_at}
// @param survivor_aliases: LIST  the survivor's aliases without the absorbed names
// @param now: STRING  timestamp
MATCH (m:EntityMerge {id: $merge_id})
OPTIONAL MATCH (s:Entity {id: m.survivor_id})
MERGE (a:Entity:__Entity__ {id: $absorbed.id})
SET a.key = $absorbed.key, a.name = $absorbed.name, a.type = $absorbed.type, a.description = $absorbed.description,
    a.aliases = $absorbed.aliases, a.aliases_text = reduce(text = '', alias IN $absorbed.aliases | text + alias + ' | '),
    a.method = $absorbed.method, a.source = $absorbed.source, a.created_at = $absorbed.created_at,
    m.status = 'undone', m.undone_at = $now
FOREACH (survivor IN CASE WHEN s IS NULL THEN [] ELSE [s] END |
  SET survivor.aliases = $survivor_aliases,
      survivor.aliases_text = reduce(text = '', alias IN $survivor_aliases | text + alias + ' | '))
