// Record the schema version and embedding model when a graph is initialised or upgraded.
// @param id: STRING  key of the Meta node (always "meta")
// @param schema_version: INTEGER  graph_schema.SCHEMA_VERSION
// @param embedding_model: STRING  sentence-transformers model name or path
// @param dimension: INTEGER  embedding dimension
// @param now: STRING  ISO-8601 UTC timestamp (FalkorDB has no datetime())
MERGE (m:Meta {id: $id})
ON CREATE SET m.created_at = $now
SET m.schema_version = $schema_version, m.embedding_model = $embedding_model, m.dimension = $dimension,
    m.updated_at = $now
RETURN m.schema_version AS schema_version
