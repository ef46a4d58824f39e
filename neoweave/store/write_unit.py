"""A unit of named write statements a store applies all together or not at all (`GraphStore.unit`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from neoweave.store.values import batched

if TYPE_CHECKING:
    from neoweave.store.base import GraphStore


class WriteUnit:
    """Named write statements that a store applies all together or not at all (see `GraphStore.unit`)."""

    def __init__(self, store: GraphStore) -> None:
        store.check_writable("a write unit")
        self.store = store
        self.queued: list[tuple[str, dict[str, Any]]] = []

    def run(self, name: str, params: Mapping[str, Any] | None = None) -> None:
        statement = self.store.statement(name)
        params = dict(params or {})
        statement.check_params(params)
        self.store.note_statement(name)
        self.queued.append((statement.text, params))

    def run_batches(self, name: str, rows: list[Mapping[str, Any]], params: Mapping[str, Any] | None = None) -> None:
        """Queue an `UNWIND $rows` statement once per batch of `store.batch_size` rows."""
        for batch in batched(rows, self.store.batch_size):
            self.run(name, {**(params or {}), "rows": batch})
