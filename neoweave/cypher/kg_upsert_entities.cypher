// Entities extracted from chunks: created once by id (group:key); name and type are kept from the first
// extraction (resolution and later runs add aliases, never overwrite). Descriptions are not set here: they are
// the description of the entity's mention in its smallest chunk id (kg_describe_entities, kg_refill_descriptions),
// so they do not depend on the order chunks arrived in.
// @param rows: LIST  [{id, key, name, type, method}]
// @param source: STRING  the step signature that created them
// @param now: STRING  timestamp
UNWIND $rows AS row
MERGE (e:Entity:__Entity__ {id: row.id})
ON CREATE SET e.key = row.key, e.name = row.name, e.type = row.type, e.aliases = [], e.aliases_text = '',
              e.method = row.method, e.source = $source, e.created_at = $now
