// Reading order: each chunk to the next one of the same document.
// @param rows: LIST  [{from_id, to_id}]
UNWIND $rows AS row
MATCH (a:Chunk {id: row.from_id})
MATCH (b:Chunk {id: row.to_id})
MERGE (a)-[:NEXT_CHUNK]->(b)
