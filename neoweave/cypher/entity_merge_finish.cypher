// The survivor takes the absorbed entity's names as aliases; the absorbed entity is removed.
// @param rows: LIST  [{survivor_id, absorbed_id, aliases}]  aliases: the survivor's new alias list
UNWIND $rows AS row
MATCH (s:Entity {id: row.survivor_id})
MATCH (a:Entity {id: row.absorbed_id})
SET s.aliases = row.aliases, s.aliases_text = reduce(text = '', alias IN row.aliases | text + alias + ' | ')
DETACH DELETE a
