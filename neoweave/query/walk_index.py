"""The walk index: what ppr's expansion reads, held in memory (and memory-mapped from disk) so that a walk does
not send a statement to the store per hop.

It holds the walk's graph as sorted id arrays and CSR adjacency (chunk - entity mentions with their counts,
entity - home section, entity - entity relations with their weights, section - section links with their method,
section - chunk), the mention count and type of each entity, and the unit vectors the expansion ranks by (chunks,
entities, link contexts; float16, so a cosine is exact to about 1e-3). It is built from the graph by five paged
read statements (`walk_index_*`) and records the graph's write stamp (`GraphStore.stamp`): every write through a
neoweave store replaces the stamp, so an index whose stamp differs from the graph's is never used. `WalkIndexes`
keeps the current one for a knowledge base, loading it from its directory or building it when the stamp moved.

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
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

FORMAT = 1
"""Version of the files' layout; a directory of another version is rebuilt."""
PAGE = 2000
"""Nodes per page of a build statement."""
LINK_PAGE = 100
"""Sections per page of `walk_index_links`: a section has tens of links, each with a vector (as Python floats
until the page is converted: 2,000 sections of the Python docs were 450 MB)."""
VECTOR_DTYPE = np.float16
_VECTORS = ("chunk_vectors", "entity_vectors", "link_vectors")
_STAMP = re.compile(r"[0-9A-Za-z_-]{1,64}")
"""A stamp that may name a directory (neoweave writes 16 hex digits; a hand-edited one is kept in memory only)."""


@dataclass
class WalkIndex:
    """The walk's graph as arrays. Node ids are sorted (numpy order), so a node's number is its rank and
    lookups are binary searches; `X_ptr` / `X_idx` are CSR rows (row i's neighbours: idx[ptr[i]:ptr[i+1]])."""

    stamp: str
    chunk_ids: np.ndarray
    chunk_vectors: np.ndarray  # unit vectors (float16)
    chunk_section: np.ndarray  # section number, -1 without one
    section_ids: np.ndarray
    section_chunk_ptr: np.ndarray
    section_chunk_idx: np.ndarray  # chunk numbers, ascending
    entity_ids: np.ndarray
    entity_vectors: np.ndarray
    entity_has_vector: np.ndarray
    entity_mentions: np.ndarray  # float64, NaN where the graph has none
    entity_type_code: np.ndarray  # index into entity_types, -1 for none
    entity_types: np.ndarray
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
    related_ptr: np.ndarray  # entity -> RELATED edges touching it (either end)
    related_idx: np.ndarray
    link_target: np.ndarray  # per link, by source section (CSR `link_ptr`)
    link_ptr: np.ndarray
    link_authored: np.ndarray  # method is null or 'authored'
    link_inferred: np.ndarray
    link_vectors: np.ndarray
    link_has_vector: np.ndarray

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

    def name(self, ids: str, number: int | np.integer) -> str:
        """The id of node `number` in the id array named `ids`, decoded once per process."""
        names = self.__dict__.setdefault("_names", {}).setdefault(ids, {})
        number = int(number)
        if number not in names:
            names[number] = bytes(getattr(self, ids)[number]).decode()
        return names[number]  # type: ignore[no-any-return]

    def hubs(self, max_mentions: int) -> np.ndarray:
        """Entities mentioned more than `max_mentions` times (coalesce(mention_count, 0) > max_mentions)."""
        cache = self.__dict__.setdefault("_hubs", {})
        if max_mentions not in cache:
            cache[max_mentions] = np.nan_to_num(self.entity_mentions, nan=0.0) > max_mentions
        return cache[max_mentions]  # type: ignore[no-any-return]

    @property
    def dimension(self) -> int:
        return int(self.chunk_vectors.shape[1]) if self.chunk_vectors.ndim == 2 else 0

    def describe(self) -> dict[str, Any]:
        return {"chunks": len(self.chunk_ids), "entities": len(self.entity_ids), "sections": len(self.section_ids),
                "links": len(self.link_target), "mentions": len(self.mention_idx),
                "relations": len(self.related_start), "bytes": self.nbytes()}

    def nbytes(self) -> int:
        """Bytes of all arrays (on disk; in memory as far as they are read)."""
        return sum(np.asarray(getattr(self, f.name)).nbytes for f in fields(self) if f.name != "stamp")

    # -- files -----------------------------------------------------------------------------------
    def save(self, root: Path) -> None:
        """Write every array as .npy and the manifest last into `root/<stamp>`, a new directory renamed into place;
        then remove the indexes of other stamps (a process still reading one keeps its open files)."""
        if not _STAMP.fullmatch(self.stamp):
            raise OSError(f"stamp {self.stamp!r} cannot name a directory")
        root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
        try:
            for f in fields(self):
                if f.name != "stamp":
                    np.save(staging / f"{f.name}.npy", np.asarray(getattr(self, f.name)), allow_pickle=False)
            (staging / "manifest.json").write_text(json.dumps({"format": FORMAT, "stamp": self.stamp,
                                                               **self.describe()}))
            final = root / self.stamp
            shutil.rmtree(final, ignore_errors=True)
            staging.rename(final)
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)
            raise
        for other in root.iterdir():
            if other != final and not other.name.startswith(".building-"):
                shutil.rmtree(other, ignore_errors=True)

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
        try:  # vectors stay on disk, read as touched (plain ndarray views: memmap indexing costs 1 us a call)
            arrays = {f.name: np.load(directory / f"{f.name}.npy", mmap_mode="r" if f.name in _VECTORS else None,
                                      allow_pickle=False) for f in fields(cls) if f.name != "stamp"}
            for name in _VECTORS:
                arrays[name] = arrays[name].view(np.ndarray)
        except (OSError, ValueError) as exc:  # removed meanwhile by a newer index, or damaged
            log.warning("walk index in %s unreadable (%s)", directory, exc)
            return None
        return cls(stamp=stamp, **arrays)

    @staticmethod
    def saved_under(root: Path) -> bool:
        return root.is_dir() and any((child / "manifest.json").is_file() for child in root.iterdir())


# -- building it --------------------------------------------------------------------------------
class _Pages:
    """The build's statements page by page, with a progress bar over the nodes they page through."""

    def __init__(self, store: GraphStore, progress: bool) -> None:
        self.store = store
        self.bar = None
        if progress:
            from tqdm import tqdm

            nodes = store.counts().nodes
            total = 2 * nodes.get("Chunk", 0) + 2 * nodes.get("Entity", 0) + nodes.get("Section", 0)
            self.bar = tqdm(total=total, desc="walk index", unit="node", dynamic_ncols=True)

    def pages(self, statement: str, size: int = PAGE) -> Iterator[list[dict[str, Any]]]:
        for page in self.store.pages(statement, size):
            yield page
            if self.bar is not None:
                self.bar.update(len({row["key"] for row in page}))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def build_walk_index(store: GraphStore, stamp: str, *, progress: bool = False) -> WalkIndex:
    """Read the walk's graph from the store (five paged statements)."""
    started = time.perf_counter()
    pages = _Pages(store, progress)
    try:
        index = _build(pages, stamp)
    finally:
        pages.close()
    log.info("walk index built in %.1f s: %d chunks, %d entities, %d links, %.0f MB", time.perf_counter() - started,
             len(index.chunk_ids), len(index.entity_ids), len(index.link_target), index.nbytes() / 1e6)
    return index


def _build(pages: _Pages, stamp: str) -> WalkIndex:
    meta = pages.store.read_meta() or {}
    dimension = int(meta.get("dimension") or 0)
    with ThreadPoolExecutor(max_workers=1) as reader:  # the store answers one while this thread decodes another
        reading_links = reader.submit(_read, pages, "walk_index_links", ("key", "target_id", "method"), dimension,
                                      keep=lambda row: row["target_id"] is not None, size=LINK_PAGE)
        chunks = _read(pages, "walk_index_chunks", ("key", "section_id"), dimension)
        entities = _read(pages, "walk_index_entities", ("key", "mentions", "type", "homes"), dimension)
        chunk_order, chunk_ids = _order(chunks.columns["key"])
        entity_order, entity_ids = _order(entities.columns["key"])
        chunk_no = {key.decode(): i for i, key in enumerate(chunk_ids.tolist())}
        entity_no = {key.decode(): i for i, key in enumerate(entity_ids.tolist())}
        mentions = _read(pages, "walk_index_mentions", ("key", "entity_id", "count"), 0,
                         keep=lambda row: row["entity_id"] in entity_no)
        related = _read(pages, "walk_index_related", ("key", "other_id", "weight"), 0,
                        keep=lambda row: row["other_id"] in entity_no)
        links = reading_links.result()
    section_ids = _sorted_ids([*(key for key in chunks.columns["section_id"] if key is not None),
                               *(home for homes in entities.columns["homes"] for home in homes or []),
                               *links.columns["key"], *links.columns["target_id"]])
    section_no = {key.decode(): i for i, key in enumerate(section_ids.tolist())}

    chunk_section = np.array([section_no.get(key, -1) if key is not None else -1
                              for key in chunks.columns["section_id"]], dtype=np.int32)[chunk_order]
    has_section = chunk_section >= 0
    section_chunk_ptr, section_chunk_idx = _csr(chunk_section[has_section],
                                                np.flatnonzero(has_section).astype(np.int32), len(section_ids))

    entity_mentions = np.array([np.nan if m is None else float(m) for m in entities.columns["mentions"]],
                               dtype=np.float64)[entity_order]
    types = sorted({t for t in entities.columns["type"] if t is not None})
    type_no = {name: i for i, name in enumerate(types)}
    entity_type_code = np.array([type_no.get(t, -1) for t in entities.columns["type"]], dtype=np.int32)[entity_order]
    home_pairs = [(entity_no[key], section_no[home]) for key, homes in
                  zip(entities.columns["key"], entities.columns["homes"], strict=True) for home in homes or []]
    home_ptr, home_idx = _csr_pairs(home_pairs, len(entity_ids))
    homed_ptr, homed_idx = _csr_pairs([(s, e) for e, s in home_pairs], len(section_ids))

    mention_chunk = np.array([chunk_no[key] for key in mentions.columns["key"]], dtype=np.int64)
    mention_entity = np.array([entity_no[key] for key in mentions.columns["entity_id"]], dtype=np.int64)
    mention_ptr, mention_idx, mention_count = _csr_weighted(
        mention_chunk, mention_entity, np.array([1.0 if c is None else float(c) for c in mentions.columns["count"]]),
        len(chunk_ids))
    mentioned_ptr, mentioned_idx = _csr(mention_entity, mention_chunk, len(entity_ids))
    del mentions

    related_start = np.array([entity_no[key] for key in related.columns["key"]], dtype=np.int32)
    related_end = np.array([entity_no[key] for key in related.columns["other_id"]], dtype=np.int32)
    related_weight = np.array([1.0 if w is None else float(w) for w in related.columns["weight"]], dtype=np.float64)
    edges = np.arange(len(related_start))
    not_loop = related_end != related_start
    related_ptr, related_idx = _csr(np.concatenate([related_start, related_end[not_loop]]),
                                    np.concatenate([edges, edges[not_loop]]), len(entity_ids))

    link_source = np.array([section_no[key] for key in links.columns["key"]], dtype=np.int32)
    link_order = np.argsort(link_source, kind="stable")
    link_source = link_source[link_order]
    link_ptr = np.searchsorted(link_source, np.arange(len(section_ids) + 1)).astype(np.int64)
    link_target = np.array([section_no[key] for key in links.columns["target_id"]], dtype=np.int32)[link_order]
    methods = np.array([method or "authored" for method in links.columns["method"]], dtype=object)[link_order]
    return WalkIndex(
        stamp=stamp, chunk_ids=chunk_ids, chunk_vectors=chunks.vectors[chunk_order], chunk_section=chunk_section,
        section_ids=section_ids, section_chunk_ptr=section_chunk_ptr, section_chunk_idx=section_chunk_idx,
        entity_ids=entity_ids, entity_vectors=entities.vectors[entity_order],
        entity_has_vector=entities.present[entity_order], entity_mentions=entity_mentions,
        entity_type_code=entity_type_code, entity_types=np.array(types, dtype=str),
        mention_ptr=mention_ptr, mention_idx=mention_idx, mention_count=mention_count,
        mentioned_ptr=mentioned_ptr, mentioned_idx=mentioned_idx, home_ptr=home_ptr, home_idx=home_idx,
        homed_ptr=homed_ptr, homed_idx=homed_idx, related_start=related_start, related_end=related_end,
        related_weight=related_weight, related_ptr=related_ptr, related_idx=related_idx,
        link_target=link_target, link_ptr=link_ptr, link_authored=methods == "authored",
        link_inferred=methods == "inferred", link_vectors=links.vectors[link_order],
        link_has_vector=links.present[link_order])


@dataclass
class _Read:
    columns: dict[str, list[Any]]
    vectors: np.ndarray  # unit float16 rows, in the order read (zero rows without a vector)
    present: np.ndarray


def _read(pages: _Pages, statement: str, columns: tuple[str, ...], dimension: int,
          keep: Callable[[dict[str, Any]], bool] = lambda row: True, size: int = PAGE) -> _Read:
    """A build statement's rows as columns; its `embedding` column (when `dimension`) turned into float16 unit
    vectors page by page, so the Python floats of one page at most are held at a time."""
    read = _Read({name: [] for name in columns}, np.zeros((0, dimension), dtype=VECTOR_DTYPE),
                 np.zeros(0, dtype=bool))
    blocks, present = [], []
    for page in pages.pages(statement, size):
        rows = [row for row in page if keep(row)]
        for name in columns:
            read.columns[name].extend(row[name] for row in rows)
        if dimension:
            vectors, has = _unit_vectors([row["embedding"] for row in rows], dimension)
            blocks.append(vectors)
            present.append(has)
    if blocks:
        read.vectors, read.present = np.concatenate(blocks), np.concatenate(present)
    return read


def _order(keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The permutation that sorts `keys` by their UTF-8 bytes, and the sorted ids (keys are unique)."""
    encoded = np.array([key.encode() for key in keys]) if keys else np.array([], dtype="S1")
    order = np.argsort(encoded, kind="stable")
    return order, encoded[order]


def _sorted_ids(ids: Iterable[str]) -> np.ndarray:
    """UTF-8 ids in byte order (= code point order), as a fixed-width bytes array."""
    unique = sorted({key.encode() for key in ids})
    return np.array(unique) if unique else np.array([], dtype="S1")


def _unit_vectors(vectors: list[Any], dimension: int) -> tuple[np.ndarray, np.ndarray]:
    """Rows scaled to unit length (zero rows for missing vectors) and which rows had one."""
    present = np.array([v is not None for v in vectors], dtype=bool)
    matrix = np.zeros((len(vectors), dimension), dtype=np.float32)
    for i, vector in enumerate(vectors):
        if vector is not None:
            matrix[i] = vector
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return matrix.astype(VECTOR_DTYPE), present


def _csr(rows: np.ndarray, columns: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.lexsort((columns, rows))
    rows, columns = rows[order], columns[order]
    return np.searchsorted(rows, np.arange(size + 1)).astype(np.int64), columns.astype(np.int32)


def _csr_pairs(pairs: list[tuple[int, int]], size: int) -> tuple[np.ndarray, np.ndarray]:
    if not pairs:
        return np.zeros(size + 1, dtype=np.int64), np.zeros(0, dtype=np.int32)
    array = np.array(pairs, dtype=np.int64)
    return _csr(array[:, 0], array[:, 1], size)


def _csr_weighted(rows: np.ndarray, columns: np.ndarray, weights: np.ndarray, size: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    order = np.lexsort((columns, rows))
    return (np.searchsorted(rows[order], np.arange(size + 1)).astype(np.int64), columns[order].astype(np.int32),
            weights[order].astype(np.float64))


# -- keeping the current one --------------------------------------------------------------------
class WalkIndexes:
    """The current walk index of one graph: in memory, else loaded from the store's derived directory when it
    was built at the graph's stamp, else (when asked to) built from the graph and saved there. A graph without a
    stamp gets none. One per store object (`of`); thread-safe, one build at a time."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self.directory = store.derived_directory("walk-index")
        self._current: WalkIndex | None = None
        self._lock = threading.Lock()

    @classmethod
    def of(cls, store: GraphStore) -> WalkIndexes:
        return store.derived.setdefault("walk_index", cls(store))  # type: ignore[no-any-return]

    def current(self, *, build: bool = False, progress: bool = False) -> WalkIndex | None:
        """The index built at the graph's stamp: the one in memory, or the saved one, or (with `build`) a new
        one; None when there is none (then ppr reads the store)."""
        stamp = self.store.stamp()
        if stamp is None:
            return None
        index = self._current
        if index is not None and index.stamp == stamp:
            return index
        with self._lock:
            if self._current is not None and self._current.stamp == stamp:
                return self._current
            index = WalkIndex.load(self.directory, stamp) if self.directory else None
            if index is None and build:
                index = self._build(stamp, progress)
            if index is not None:
                self._current = index
            return index

    def saved(self) -> bool:
        """Whether an index of this graph was ever saved (then writes keep it current)."""
        return self.directory is not None and WalkIndex.saved_under(self.directory)

    def _build(self, stamp: str, progress: bool) -> WalkIndex | None:
        index = build_walk_index(self.store, stamp, progress=progress)
        if self.store.stamp() != stamp:
            log.info("the graph changed while its walk index was built: not kept")
            return None
        if self.directory is not None:
            try:
                index.save(self.directory)
            except OSError as exc:  # a read-only data directory: the index stays in memory only
                log.warning("walk index not saved to %s: %s", self.directory, exc)
        return index
