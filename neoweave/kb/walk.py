"""The knowledge base's side of ppr's walk index (`query.walk_index`): its state, and keeping it current after the
knowledge base's own writes."""

from __future__ import annotations

import logging
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.graph_schema.footprint import Footprint, overlaps
from neoweave.query.walk_build import WALK_READS
from neoweave.query.walk_index import WalkIndexes
from neoweave.store.base import GraphStore, WriteSpan

log = logging.getLogger(__name__)


def walk_index_state(store: GraphStore, *, rebuild: bool, writable: bool, progress: bool) -> dict[str, Any]:
    """Whether an index matches the graph's write stamp, where it is saved, its size; with `rebuild` it is built
    first when it does not (a graph last written before stamps came in is stamped first, when `writable`)."""
    indexes = WalkIndexes.of(store)
    if rebuild and writable and store.stamp() is None:
        store.restamp()
    index = indexes.current(build=rebuild, progress=progress)
    return {"current": index is not None, "directory": str(indexes.directory) if indexes.directory else None,
            "stamp": index.stamp if index is not None else store.stamp(),
            **(index.describe() if index is not None else {})}


def after_write(store: GraphStore, what: str, *, build: bool, progress: bool, span: WriteSpan | None = None,
                writes: Footprint | None = None) -> None:
    """After a write operation: keep the index current when one was saved (its users rely on it) or `build` asks
    for one (after `enrich kg`). A span that ran alone and wrote nothing the index reads (`writes`, declared by the
    enrich step) moves the saved index to the new stamp; anything else rebuilds it (reading only the vectors that
    changed). A failed rebuild only logs: ppr and kg read the store until an index is current."""
    indexes = WalkIndexes.of(store)
    if indexes.directory is None or not (build or indexes.saved()):
        return
    between = span.alone_between() if span is not None else None
    if (not build and between is not None and writes is not None and not overlaps(writes, WALK_READS)
            and indexes.carry(*between)):
        log.info("walk index kept across %s (it writes nothing the index reads)", what)
        return
    try:
        if store.stamp() is None:  # a graph restored from a backup made before stamps came in
            store.restamp()
        indexes.current(build=True, progress=progress)
    except NeoweaveError as exc:
        log.warning("walk index not rebuilt after %s: %s (ppr and kg read the store until it is)", what, exc)
