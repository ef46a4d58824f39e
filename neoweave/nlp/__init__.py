"""Shared text tools (layer 1): sentences, link-context windows, entity names, fast extraction, keyphrases.

They sit below ingest, enrich and query so that all three can use them without importing each other. Nothing
here touches the store; the submodules are imported by name (`neoweave.nlp.names`), so importing this package
loads nothing (spaCy only when an extractor first parses).
"""
