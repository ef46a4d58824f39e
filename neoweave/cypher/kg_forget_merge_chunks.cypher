// Merge records list the chunks the absorbed entity was mentioned in when the merge was made: chunks being
// forgotten (changed, deleted or re-processed) leave those lists, so a record never cites a deleted chunk. One
// pass over the records (a few per thousand entities), not a lookup per chunk.
// @param chunk_ids: LIST  chunk ids
MATCH (m:EntityMerge)
WHERE any(id IN m.chunk_ids WHERE id IN $chunk_ids)
SET m.chunk_ids = [id IN m.chunk_ids WHERE NOT id IN $chunk_ids]
