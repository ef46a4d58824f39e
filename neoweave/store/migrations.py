"""What a graph written by an older neoweave lacks, added when its schema is applied (`GraphStore.apply_schema`)
or an export of it is imported: one step per schema version that needs data written, not only an index."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from neoweave.store.values import search_text

if TYPE_CHECKING:
    from neoweave.store.base import GraphStore


def fill_search_texts(store: GraphStore) -> None:
    """Schema 3: chunks carry `search_text` (only those with whitespace the full-text tokenizer does not split)."""
    for rows in store.pages("chunk_texts_page", size=2000, cursor="id"):
        folded = [{"id": row["id"], "search_text": search_text(row["text"] or "")} for row in rows]
        store.write_batches("set_chunk_search_texts", [row for row in folded if row["search_text"]])


STEPS: dict[int, Callable[[GraphStore], None]] = {3: fill_search_texts}
"""The schema version a step brings a graph to."""


def upgrade(store: GraphStore, version: int) -> None:
    """Run the steps from `version` (the graph's) to the current one, in order."""
    for target in sorted(STEPS):
        if target > version:
            STEPS[target](store)
