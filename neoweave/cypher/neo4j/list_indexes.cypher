// Indexes and their state for `neoweave status`.
SHOW INDEXES YIELD name, type, entityType, labelsOrTypes, properties, state, options
RETURN name, type, entityType AS entity_type, labelsOrTypes AS labels, properties, state, options
ORDER BY name
