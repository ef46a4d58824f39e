// The survivor takes the absorbed entity's names as aliases; the absorbed entity is removed. The survivor's
// description is cleared (unless imported): it gained mentions, and kg_refill_descriptions, run after resolution,
// chooses again by the rule of kg_describe_entities (the smallest chunk id's), as a graph built with the merge
// already made would.
// @param rows: LIST  [{survivor_id, absorbed_id, aliases}]  aliases: the survivor's new alias list
UNWIND $rows AS row
MATCH (s:Entity {id: row.survivor_id})
MATCH (a:Entity {id: row.absorbed_id})
SET s.aliases = row.aliases, s.aliases_text = reduce(text = '', alias IN row.aliases | text + alias + ' | ')
FOREACH (_ IN CASE WHEN coalesce(s.method, '') <> 'import' THEN [1] ELSE [] END |
  SET s.description = null, s.description_chunk = null)
DETACH DELETE a
