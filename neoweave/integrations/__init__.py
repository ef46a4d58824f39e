"""Bridges to other frameworks (optional extras)."""
