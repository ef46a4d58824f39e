// Entities extracted from chunks: created once by id (group:key); name, type and description are kept
// from the first extraction (resolution and later runs add aliases, never overwrite).
// @param rows: LIST  [{id, key, name, type, description, description_chunk, method}]
// @param source: STRING  the step signature that created them
// @param now: STRING  timestamp
UNWIND $rows AS row
MERGE (e:Entity:__Entity__ {id: row.id})
ON CREATE SET e.key = row.key, e.name = row.name, e.type = row.type, e.aliases = [], e.aliases_text = '',
              e.method = row.method, e.source = $source, e.created_at = $now
SET e.description_chunk = CASE WHEN e.description IS NULL THEN row.description_chunk ELSE e.description_chunk END,
    e.description = coalesce(e.description, row.description)
