// rst step: every paragraph (chunk) of the given documents with its embedding, its section's title and whether the
// step has processed it with the current signature (its reading-order neighbours and most similar paragraphs are
// paired from these).
// @param doc_ids: LIST  document ids
// @param signature: STRING  the step's current signature (a '+fallback' suffix counts as processed)
UNWIND $doc_ids AS doc_id
MATCH (c:Chunk {doc_id: doc_id})
MATCH (s:Section)-[:HAS_CHUNK]->(c)
RETURN c.id AS id, s.title AS section_title, c.doc_id AS doc_id, c.order AS order, c.text AS text, c.embedding AS embedding,
       c.main_idea AS main_idea, any(entry IN coalesce(c.enriched, []) WHERE entry STARTS WITH $signature) AS done
