// Evaluation: the stored text of gold evidence, the ground-truth context the thesis's retrieval BERTScore compares
// the retrieved context with when the QA file gives no evidence text. Record corpora name a document by title
// (every chunk of it, in reading order), documentation names a section by URL (its chunks in order).
// @param titles: LIST  document titles
// @param urls: LIST  section URLs
MATCH (d:Document)
WHERE d.title IN $titles
MATCH (d)-[:HAS_SECTION]->(s:Section)-[:HAS_CHUNK]->(c:Chunk)
WITH d.title AS key, s, c
ORDER BY key, s.order, c.order
RETURN key, collect(c.text) AS texts
UNION ALL
UNWIND $urls AS url
MATCH (s:Section {url: url})-[:HAS_CHUNK]->(c:Chunk)
WITH url AS key, c
ORDER BY key, c.order
RETURN key, collect(c.text) AS texts
