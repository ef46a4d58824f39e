// Uniqueness constraints for `neoweave status`.
CALL db.constraints() YIELD type, label, properties, status
RETURN label + ':' + reduce(s = '', p IN properties | s + p + ' ') AS name, type, [label] AS labels,
       properties
ORDER BY name
