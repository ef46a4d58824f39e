// Set entities' aliases (and the text the entity full-text index reads).
// @param rows: LIST  [{id, aliases}]
UNWIND $rows AS row
MATCH (e:Entity {id: row.id})
SET e.aliases = row.aliases, e.aliases_text = reduce(text = '', alias IN row.aliases | text + alias + ' | ')
