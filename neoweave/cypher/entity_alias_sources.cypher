// The survivors of active merges with their aliases and the surface forms their merge records hold: the input of
// resolution.refresh_aliases, which makes an entity's aliases the sorted forms of its merges (plus the aliases
// an imported entity had), so that a survivor deleted with its last mention and re-created by a later chunk has them
// again, and their order does not depend on the order of the merges.
MATCH (m:EntityMerge {status: 'merged'})
WITH m.survivor_id AS id, collect(m.forms) AS forms
MATCH (e:Entity {id: id})
RETURN e.id AS id, e.name AS name, e.aliases AS aliases, e.method AS method, forms
ORDER BY id
