// Wait until freshly created indexes are online, so a query right after `init` or ingest uses them.
// Neo4j only: FalkorDB builds its indexes synchronously.
CALL db.awaitIndexes(300)
