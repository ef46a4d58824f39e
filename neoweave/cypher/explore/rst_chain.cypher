// The rhetorical chain around a paragraph (KHL-RAG): RST edges up to two steps either way whose confidence is
// above a threshold, each with its relation; the paragraphs' main ideas beside.
// @param chunk_id: STRING  a chunk id
// @param min_weight: FLOAT  keep edges weighing more than this (0 to 10; the retriever's tau is 5)
MATCH path = (c:Chunk {id: $chunk_id})-[:RST*1..2]-(n:Chunk)
WHERE all(r IN relationships(path) WHERE r.weight > $min_weight)
RETURN path, n.id AS paragraph, [r IN relationships(path) | r.relation] AS relations, n.main_idea AS main_idea
LIMIT 50
