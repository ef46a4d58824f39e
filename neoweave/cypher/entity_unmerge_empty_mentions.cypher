// Undo a merge, third statement: delete the survivor's mention edges `entity_unmerge_mentions` left without a
// surface form, its lists empty (a statement of its own: on FalkorDB the SETs of rows a later WHERE drops are lost).
// @param survivor_id: STRING  the survivor's id
MATCH (s:Entity {id: $survivor_id})
MATCH (:Chunk)-[m:MENTIONS]->(s)
WITH m
WHERE size(m.origin_ids) = 0
DELETE m
