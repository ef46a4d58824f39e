// Clear the aliases merges gave these entities (an imported entity keeps its own): resolution dissolving their
// merges; the merges the clusters still give add them back (`resolution.refresh_aliases`).
// @param ids: LIST  entity ids
UNWIND $ids AS entity_id
MATCH (e:Entity {id: entity_id})
WITH e
WHERE coalesce(e.method, '') <> 'import'
SET e.aliases = [], e.aliases_text = ''
