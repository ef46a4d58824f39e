// Indexes and their state for `neoweave status` (FalkorDB lists one row per label).
CALL db.indexes() YIELD label, properties, types, options, entitytype, status
RETURN label + ':' + reduce(s = '', p IN properties | s + p + ' ') AS name, types AS type,
       entitytype AS entity_type, [label] AS labels, properties, status AS state, options
ORDER BY name
