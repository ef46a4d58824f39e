"""The knowledge base's side of ppr's walk index (`query.walk_index`): its state, and keeping it current after the
knowledge base's own writes."""

from __future__ import annotations

import logging
from typing import Any

from neoweave.enrich import kg_changes, resolution_state
from neoweave.errors import NeoweaveError
from neoweave.graph_schema.footprint import Footprint, overlaps
from neoweave.query.walk_build import WALK_READS
from neoweave.query.walk_index import WalkIndexes
from neoweave.store.base import GraphStore
from neoweave.store.values import WriteSpan

log = logging.getLogger(__name__)


def walk_index_state(store: GraphStore, *, rebuild: bool, writable: bool, progress: bool,
                     background: bool | None = None) -> dict[str, Any]:
    """Whether an index matches the graph's write stamp, whether one was ever saved (then `enrich kg` and
    `neoweave walk-index` keep it, and servers rebuild it), where, its size; with `rebuild` it is built first when
    it does not (a graph last written before stamps came in is stamped first, when `writable`); `background`
    sets `WalkIndexes.background`."""
    indexes = WalkIndexes.of(store)
    if background is not None:
        indexes.background = background
    if rebuild and writable and store.stamp() is None:
        store.restamp()
    index = indexes.current(build=rebuild, progress=progress)
    return {"current": index is not None, "saved": indexes.saved(),
            "directory": str(indexes.directory) if indexes.directory else None,
            "stamp": index.stamp if index is not None else store.stamp(),
            **(index.describe() if index is not None else {})}


def after_write(store: GraphStore, what: str, *, build: bool, progress: bool, span: WriteSpan | None = None,
                writes: Footprint | None = None, full: bool = False) -> None:
    """After a write operation, what becomes of the walk index: nothing when none was saved and none is asked
    for; kept (moved to the new stamp) across a span that ran alone and wrote nothing the index reads (`writes`,
    declared by the enrich step); built with `build` (after `enrich kg`, or a restore; only the vectors that
    changed are read); else left behind the graph: any other write (ingest, delete, sync, Cypher) would cost a
    rebuild of seconds on a large graph however small the write. ppr and kg then read the store until `enrich
    kg` or `neoweave walk-index` rebuilds it; servers rebuild it in the background (`WalkIndexes.background`).
    `full` reads the whole graph (one that may not descend from the saved index's). A failed build only logs."""
    indexes = WalkIndexes.of(store)
    if indexes.directory is None or not (build or indexes.saved()):
        return
    between = span.alone_between() if span is not None else None
    if (not build and between is not None and writes is not None and not overlaps(writes, WALK_READS)
            and indexes.carry(*between)):
        log.info("walk index kept across %s (it writes nothing the index reads)", what)
        return
    if not build:
        log.info("walk index behind the graph after %s: ppr and kg read the store until `neoweave enrich kg` or "
                 "`neoweave walk-index` rebuilds it", what)
        return
    try:
        if store.stamp() is None:  # a graph restored from a backup made before stamps came in
            store.restamp()
        index = indexes.current(build=True, progress=progress, full=full)
        if index is not None and index.log is not None:
            kg_changes.walk_read(store, index.log, index.position)
    except NeoweaveError as exc:
        log.warning("walk index not rebuilt after %s: %s (ppr and kg read the store until it is)", what, exc)


def after_restore(store: GraphStore) -> None:
    """The restored graph gets its walk index at once when this data directory had one (restores are rare and
    slow; the backup holds no index), read from the whole graph: the saved index may be of a later state."""
    resolution_state.forget_saved(store)  # the saved rows may be of a later state too
    after_write(store, "restore", build=WalkIndexes.of(store).saved(), progress=False, full=True)
