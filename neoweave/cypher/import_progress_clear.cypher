// neoweave import: remove the marker once the import is complete and checked.
MATCH (m:Meta {id: 'import'})
DELETE m
