// Remove derived merge records whose decision no longer holds (resolution re-derives them from the mentions;
// their entities are re-extracted in the same unit).
// @param ids: LIST  EntityMerge ids
UNWIND $ids AS merge_id
MATCH (m:EntityMerge {id: merge_id})
DELETE m
