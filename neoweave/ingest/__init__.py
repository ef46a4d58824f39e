"""Ingest: documents into the lexical and hyperlink graph."""
