"""neoweave: documents into one knowledge graph; questions answered by traversing it."""

__version__ = "0.1.0"
