"""The walk index: what ppr's expansion reads, held in memory (and memory-mapped from disk) so that a walk does
not send a statement to the store per hop.

It holds the walk's graph as sorted id arrays and CSR adjacency (chunk - entity mentions with their counts,
entity - home section, entity - entity relations with their weights, section - section links with their method,
section - chunk), the mention count and type of each entity, and the unit vectors the expansion ranks by (chunks,
entities, link contexts; float32 as the store keeps them: a float16 copy is half the bytes, but converting it
cost a query 3.5 ms of 19) with a fingerprint of each. Vectors are rows of append-only files successive indexes
share (`walk_storage`): saving an update writes the rows it read, not every vector again. `walk_build` builds it
from the graph; it records the graph's write stamp (`GraphStore.stamp`): every write through a neoweave store
replaces the stamp, so an index whose stamp differs from the graph's is never used. `WalkIndexes` keeps the current
one for a store, loading it from its directory or building it when the stamp moved (from the previous one: only the
vectors that changed are read).

`expand` (in `walk_expand`) gives exactly the rows of the `ppr_expand` statement, so the walk is the same with or
without the index.
"""

from __future__ import annotations

import json
import logging
import re
import shutil
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from neoweave.query.walk_storage import DTYPE, VectorRows, load_array, remove_unnamed, save_array
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

FORMAT = 6
"""Version of the files' layout; a directory of another version is rebuilt."""
PAGE = 2000
"""Nodes per page of a build statement."""
VECTOR_DTYPE = DTYPE
"""The vectors' type (one source: `walk_storage.DTYPE`)."""
_VECTORS = ("chunk_vectors", "entity_vectors", "link_vectors")
"""The fields that are `VectorRows`: a slot array in the index's directory, rows in `vectors/`."""
VECTOR_FILES = "vectors"
_SCALARS = ("stamp", "log", "position")
"""The fields that are not arrays (kept in the manifest)."""
_STAMP = re.compile(r"[0-9A-Za-z_-]{1,64}")
"""A stamp that may name a directory (neoweave writes 16 hex digits; a hand-edited one is kept in memory only)."""


@dataclass
class WalkIndex:
    """The walk's graph as arrays. Node ids are sorted (numpy order), so a node's number is its rank and
    lookups are binary searches; `X_ptr` / `X_idx` are CSR rows (row i's neighbours: idx[ptr[i]:ptr[i+1]])."""

    stamp: str
    chunk_ids: np.ndarray
    chunk_vectors: VectorRows  # unit vectors (float32)
    chunk_fingerprint: np.ndarray  # the embedding's cosine to the probe (walk_build.probe): equal = unchanged
    chunk_section: np.ndarray  # section number, -1 without one
    section_ids: np.ndarray
    section_chunk_ptr: np.ndarray
    section_chunk_idx: np.ndarray  # chunk numbers, ascending
    entity_ids: np.ndarray
    entity_vectors: VectorRows
    entity_has_vector: np.ndarray
    entity_fingerprint: np.ndarray  # NaN without a vector
    entity_mentions: np.ndarray  # float64, NaN where the graph has none
    entity_type_code: np.ndarray  # index into entity_types, -1 for none
    entity_types: np.ndarray
    entity_relations: np.ndarray  # coalesce(relation_count, 0): kg's hub cut (`max_degree`)
    mention_ptr: np.ndarray  # chunk -> entities it mentions
    mention_idx: np.ndarray
    mention_count: np.ndarray  # m.count, 1 where the graph has none
    mentioned_ptr: np.ndarray  # entity -> chunks mentioning it
    mentioned_idx: np.ndarray
    home_ptr: np.ndarray  # entity -> sections describing it
    home_idx: np.ndarray
    homed_ptr: np.ndarray  # section -> entities it describes
    homed_idx: np.ndarray
    related_start: np.ndarray
    related_end: np.ndarray
    related_weight: np.ndarray  # coalesce(r.weight, 1.0)
    related_type_code: np.ndarray  # index into related_types, -1 for none
    related_types: np.ndarray
    related_ptr: np.ndarray  # entity -> RELATED edges touching it (either end)
    related_idx: np.ndarray
    link_target: np.ndarray  # per link, by source section (CSR `link_ptr`)
    link_ptr: np.ndarray
    link_authored: np.ndarray  # method is null or 'authored'
    link_inferred: np.ndarray
    link_vectors: VectorRows
    link_has_vector: np.ndarray
    link_fingerprint: np.ndarray  # NaN without a context vector
    log: str | None = None
    """The token of the record of change (`enrich.kg_changes`) read when the index was built, and the position
    in it: an update re-reads only the mentions and relations of the entities logged after it."""
    position: int = 0

    # -- lookups ---------------------------------------------------------------------------------
    @staticmethod
    def numbers(ids: np.ndarray, wanted: Iterable[str]) -> list[int]:
        """Numbers of the `wanted` ids present in the sorted `ids`, in the order given (absent ones dropped)."""
        wanted = list(wanted)
        if not wanted or not len(ids):
            return []
        keys = np.array([key.encode() for key in wanted])  # own width: a longer id is not cut to a shorter one
        found = np.searchsorted(ids, keys)
        found = np.minimum(found, len(ids) - 1)
        return [int(i) for i, key in zip(found, keys, strict=True) if ids[i] == key]

    @staticmethod
    def id_of(ids: np.ndarray, number: int | np.integer) -> str:
        return bytes(ids[number]).decode()

    def names(self, ids: str) -> list[str]:
        """The ids of the array named `ids` as str, decoded once per index (78k entities: ~15 ms)."""
        cache = self.__dict__.setdefault("_names", {})
        if ids not in cache:
            cache[ids] = [key.decode() for key in getattr(self, ids).tolist()]
        return cache[ids]  # type: ignore[no-any-return]

    def entity_fields(self) -> list[tuple[str, float | None, str | None]]:
        """Per entity number: (id, mention count or None, type or None), as Python values, made once per index
        (an expansion returns each with up to hundreds of rows a question)."""
        cache = self.__dict__
        if "_entity_fields" not in cache:
            types = [str(name) for name in self.entity_types.tolist()]
            cache["_entity_fields"] = [
                (key, None if mentions != mentions else mentions, types[code] if code >= 0 else None)  # NaN: none
                for key, mentions, code in zip(self.names("entity_ids"), self.entity_mentions.tolist(),
                                               self.entity_type_code.tolist(), strict=True)]
        return cache["_entity_fields"]  # type: ignore[no-any-return]

    def hubs(self, max_mentions: int) -> np.ndarray:
        """Entities mentioned more than `max_mentions` times (coalesce(mention_count, 0) > max_mentions)."""
        cache = self.__dict__.setdefault("_hubs", {})
        if max_mentions not in cache:
            cache[max_mentions] = np.nan_to_num(self.entity_mentions, nan=0.0) > max_mentions
        return cache[max_mentions]  # type: ignore[no-any-return]

    @property
    def dimension(self) -> int:
        return self.chunk_vectors.dimension

    def entity_cosines(self, numbers: np.ndarray, question: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The products of these entities' vectors with `question` (cosines for a unit question) in one float32
        product, 0 for an entity without a vector; and which entities have one. Each entity is scored once by
        its caller: a matrix product's rounding depends on a row's place in it."""
        present = self.entity_has_vector[numbers]
        products = np.zeros(len(numbers), dtype=np.float32)
        if present.any():
            products[present] = self.entity_vectors[numbers[present]] @ question
        return products, present

    def describe(self) -> dict[str, Any]:
        return {"chunks": len(self.chunk_ids), "entities": len(self.entity_ids), "sections": len(self.section_ids),
                "links": len(self.link_target), "mentions": len(self.mention_idx),
                "relations": len(self.related_start), "bytes": self.nbytes()}

    def nbytes(self) -> int:
        """Bytes of all arrays and of the vector rows in use (on disk; in memory as far as they are read)."""
        return sum(getattr(self, name).nbytes for name in self.arrays())

    @classmethod
    def arrays(cls) -> list[str]:
        """The names of the fields that are arrays (one .npy file each; a `VectorRows`' file holds its slots)."""
        return [f.name for f in fields(cls) if f.name not in _SCALARS]

    # -- files -----------------------------------------------------------------------------------
    def save(self, root: Path) -> None:
        """Write the vector rows not saved yet to `root/vectors`, every other array as .npy and the manifest last
        into `root/<stamp>`, a new directory renamed into place; then remove the indexes of other stamps and the
        vector files none names (a process still reading one keeps its open files). The index then reads its
        vectors from the files."""
        if not _STAMP.fullmatch(self.stamp):
            raise OSError(f"stamp {self.stamp!r} cannot name a directory")
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
        try:
            saved: dict[str, VectorRows] = {}
            entries: dict[str, dict[str, Any]] = {}
            for name in _VECTORS:
                saved[name], entries[name] = getattr(self, name).save(root / VECTOR_FILES, name)
            for name in self.arrays():
                array = saved[name].slot if name in saved else np.asarray(getattr(self, name))
                save_array(staging, name, array)
            (staging / "manifest.json").write_text(json.dumps({
                "format": FORMAT, "stamp": self.stamp, "log": self.log, "position": self.position,
                "dimension": self.dimension, "vectors": entries, **self.describe()}))
            final = root / self.stamp
            shutil.rmtree(final, ignore_errors=True)
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        for name, rows in saved.items():  # one attribute each: a reader holds the old rows or the new
            setattr(self, name, rows)
        for other in root.iterdir():
            if other != final and other.name != VECTOR_FILES and not other.name.startswith(".building-"):
                shutil.rmtree(other, ignore_errors=True)
        remove_unnamed(root / VECTOR_FILES, {str(entry["file"]) for entry in entries.values()})

    @classmethod
    def load(cls, root: Path, stamp: str) -> WalkIndex | None:
        """The index saved under `root` at `stamp` (vectors memory-mapped), else None."""
        if not _STAMP.fullmatch(stamp):
            return None
        directory = root / stamp
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
        except (OSError, ValueError):
            return None
        if manifest.get("format") != FORMAT or manifest.get("stamp") != stamp:
            return None
        try:  # vectors stay on disk, read as touched
            arrays: dict[str, Any] = {name: load_array(directory, name) for name in cls.arrays()}
            for name in _VECTORS:
                arrays[name] = VectorRows.load(root / VECTOR_FILES, manifest["vectors"][name], arrays[name],
                                               int(manifest["dimension"]))
        except (OSError, ValueError, KeyError, TypeError) as exc:  # removed meanwhile by a newer index, or damaged
            log.warning("walk index in %s unreadable (%s)", directory, exc)
            return None
        return cls(stamp=stamp, log=manifest.get("log"), position=int(manifest.get("position") or 0), **arrays)

    @staticmethod
    def restamp(root: Path, before: str, after: str) -> bool:
        """Rename the index saved at `before` to `after` (its manifest first, so a reader never takes it for the
        other stamp); False when none is saved at `before`."""
        if not (_STAMP.fullmatch(before) and _STAMP.fullmatch(after)):
            return False
        directory = root / before
        try:
            manifest = json.loads((directory / "manifest.json").read_text())
            if manifest.get("format") != FORMAT or manifest.get("stamp") != before:
                return False
            staging = directory / ".manifest.json"
            staging.write_text(json.dumps({**manifest, "stamp": after}))
            staging.replace(directory / "manifest.json")
            shutil.rmtree(root / after, ignore_errors=True)
            directory.rename(root / after)
        except (OSError, ValueError) as exc:  # removed meanwhile by a newer index, or damaged
            log.warning("walk index in %s not moved to stamp %s (%s)", directory, after, exc)
            return False
        return True

    @classmethod
    def latest(cls, root: Path) -> WalkIndex | None:
        """The index saved under `root` whatever its stamp (a rebuild takes the vectors that did not change
        from it), else None."""
        if not root.is_dir():
            return None
        for child in sorted(root.iterdir(), key=lambda path: path.stat().st_mtime, reverse=True):
            if not child.name.startswith(".") and (index := cls.load(root, child.name)) is not None:
                return index
        return None

    @staticmethod
    def saved_under(root: Path) -> bool:
        return root.is_dir() and any((child / "manifest.json").is_file() for child in root.iterdir())


# -- keeping the current one --------------------------------------------------------------------
class WalkIndexes:
    """The current walk index of one graph: in memory, else loaded from the store's derived directory when it
    was built at the graph's stamp, else (when asked to) built from the graph and saved there. A graph without a
    stamp gets none. One per store object (`of`); thread-safe, one build at a time. With `background` (a
    long-lived reader: the HTTP and MCP servers), a reader that finds the saved index behind the graph starts one
    build in a thread and reads the store until it is done."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.directory = store.derived_directory("walk-index")
        self.background = False
        self._current: WalkIndex | None = None
        self._lock = threading.Lock()
        self._building: threading.Thread | None = None
        self._failed_at: str | None = None  # the stamp a background build failed at: not tried again for it

    @classmethod
    def of(cls, store: GraphStore) -> WalkIndexes:
        return store.derived.setdefault("walk_index", cls(store))  # type: ignore[no-any-return]

    def current(self, *, build: bool = False, progress: bool = False, full: bool = False) -> WalkIndex | None:
        """The index built at the graph's stamp: the one in memory, or the saved one, or (with `build`) a new
        one, updated from the previous one unless `full` (a graph that may not descend from it: a restore);
        None when there is none (then ppr reads the store). Without `build` it never waits for a build another
        thread runs."""
        stamp = self.store.stamp()
        if stamp is None:
            return None
        index = self._current
        if index is not None and index.stamp == stamp:
            return index
        if not self._lock.acquire(blocking=build):
            return None  # a build is under way: this reader takes the store
        try:
            if self._current is not None and self._current.stamp == stamp:
                return self._current
            index = WalkIndex.load(self.directory, stamp) if self.directory else None
            if index is None and build:
                index = self._build(stamp, progress, full)
            elif index is None and self.background and stamp != self._failed_at and self.saved():
                self._build_in_background(stamp)
            if index is not None:
                self._current = index
            return index
        finally:
            self._lock.release()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for a background build to end (tests, a server stopping); whether none is running."""
        building = self._building
        if building is not None:
            building.join(timeout)
        return building is None or not building.is_alive()

    def _build_in_background(self, stamp: str) -> None:
        if self._building is not None and self._building.is_alive():
            return

        def build() -> None:
            try:
                self.current(build=True)
            except Exception as exc:  # a reader thread must not die: the store still answers
                self._failed_at = stamp  # every question would start the same failing build again
                log.warning("walk index not rebuilt in the background: %s (ppr and kg read the store until the "
                            "graph changes or `neoweave walk-index` builds it)", exc)

        log.info("the graph changed since its walk index was built: rebuilding it in the background")
        self._building = threading.Thread(target=build, name="walk-index-build", daemon=True)
        self._building.start()

    def carry(self, before: str, after: str) -> bool:
        """Move the index built at stamp `before` to stamp `after` without reading the graph: for a write span
        that ran alone and wrote nothing the index reads (`kb.walk.after_write`). False when there is none."""
        with self._lock:
            moved = self.directory is not None and WalkIndex.restamp(self.directory, before, after)
            if self._current is None or self._current.stamp != before:
                return moved
            self._current = replace(self._current, stamp=after)
            if self.directory is not None and not moved:  # the files were of another stamp: these replace them
                try:
                    self._current.save(self.directory)
                except OSError as exc:
                    log.warning("walk index not saved to %s: %s", self.directory, exc)
            return True

    def saved(self) -> bool:
        """Whether an index of this graph was ever saved (then writes keep it current)."""
        return self.directory is not None and WalkIndex.saved_under(self.directory)

    def _build(self, stamp: str, progress: bool, full: bool = False) -> WalkIndex | None:
        from neoweave.query.walk_build import build_walk_index

        previous = self._current or (WalkIndex.latest(self.directory) if self.directory else None)
        index = build_walk_index(self.store, stamp, progress=progress, previous=previous, update=not full)
        if self.store.stamp() != stamp:
            log.info("the graph changed while its walk index was built: not kept")
            return None
        if self.directory is not None:
            try:
                index.save(self.directory)
            except OSError as exc:  # a read-only data directory: the index stays in memory only
                log.warning("walk index not saved to %s: %s", self.directory, exc)
        return index


WALK_INDEX_USES = ("auto", "build", "store")
"""How a strategy reads the walk's graph (its `walk_index` parameter): auto (the index when one is current, else
the store), build (the index, built first when it is not current: the first question pays for it), store."""


def walk_index_for(store: GraphStore, use: str) -> WalkIndex | None:
    """The walk index a strategy's `walk_index` parameter `use` asks for, or None to read the store."""
    if use == "store":
        return None
    return WalkIndexes.of(store).current(build=use == "build")

