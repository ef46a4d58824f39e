// Once per run (kg_writes.drop_mention_context_copies): remove the scalar copy of a mention's first context that
// graphs written before 2026-11-28 hold on every MENTIONS edge (readers take `contexts` at the index of
// `origin_id`, kg_create_mentions): ~2.4 kB a chunk of FalkorDB's memory on the Python docs. Edges without one
// are only read.
MATCH ()-[m:MENTIONS]->()
WHERE m.context IS NOT NULL AND m.contexts IS NOT NULL
SET m.context = null
RETURN count(m) AS updated
