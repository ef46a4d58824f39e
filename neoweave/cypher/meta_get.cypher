// The graph's Meta node: schema version and the embedding model its vectors came from.
// @param id: STRING  key of the Meta node (always "meta")
MATCH (m:Meta {id: $id})
RETURN m.schema_version AS schema_version, m.embedding_model AS embedding_model, m.dimension AS dimension,
       m.created_at AS created_at
