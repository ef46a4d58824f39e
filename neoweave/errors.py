"""Errors users see. Each says what failed, which file or parameter, and what to do about it."""

from __future__ import annotations


class NeoweaveError(Exception):
    """Base class: an error with a one-line message and an optional hint on how to fix it."""

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message} ({self.hint})" if self.hint else self.message


class ConfigError(NeoweaveError):
    """A configuration file, environment variable or option has a bad value."""


class StoreUnavailable(NeoweaveError):
    """The graph store cannot be reached or started."""


class SchemaMismatch(NeoweaveError):
    """The graph was built with another schema version, embedding model or dimension."""


class StatementError(NeoweaveError):
    """A named Cypher statement is missing, malformed, or called with the wrong parameters."""


class ReadOnlyViolation(NeoweaveError):
    """A write was attempted where only reads are allowed."""


class ReadTimeout(NeoweaveError):
    """A read served to a person or client ran past the read time limit (`store.read_timeout`) and was stopped."""
