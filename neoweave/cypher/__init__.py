"""Every Cypher statement of neoweave, one file each, loaded by name (see `registry`)."""

from neoweave.cypher.registry import Statement, all_statements, load, statement_names

__all__ = ["Statement", "all_statements", "load", "statement_names"]
