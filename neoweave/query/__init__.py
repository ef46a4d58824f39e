"""Query: retrieval strategies over the stored graph."""
