"""Building the walk index (`query.walk_index`) from the graph, reading only the vectors that changed.

Three paged statements read the nodes and links with a fingerprint of each vector instead of the vector (its
cosine to a fixed probe: one number where the vector is 384, and a changed vector gets another one); two more
read the mentions and relations. Vectors are then taken from the previous index where id and fingerprint match
(the same rows of its files: `walk_storage`), and read from the store (by id, or by source section for links)
only for the rest: a build after a small write reads and saves a few vectors, a first build all of them. Vectors
travel as decimal text, so reading them is most of a first build's time.

The mentions and relations, most of a build's rows (2.6M mentions at 111k chunks), are read whole only by a
first build. A later one takes them from the previous index except around the entities the kg step's record of
change (`enrich.kg_changes`) logged since it (`walk_update`): every write that changes a mention or relation logs
both ends' entities in the same write unit. Relations are kept in one canonical order (start, end, type, weight),
so an updated index and a whole build hold the same arrays.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from neoweave.enrich.kg_changes import read_log
from neoweave.graph_schema.footprint import check
from neoweave.query.walk_index import PAGE, VECTOR_DTYPE, WalkIndex
from neoweave.query.walk_storage import VectorRows
from neoweave.query.walk_update import Relations, codes, updated_edges
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

WALK_READS = check({
    "Chunk.id", "Chunk.embedding", "Section.id", "HAS_CHUNK", "Entity.id", "Entity.mention_count",
    "Entity.relation_count", "Entity.type", "Entity.embedding", "DESCRIBED_BY", "MENTIONS.count", "RELATED.weight",
    "RELATED.type", "LINKS_TO.method", "LINKS_TO.context_embedding"}, "the walk index")
"""What the `walk_index_*` statements read (`graph_schema.footprint`): a write outside it leaves the index current
in all but its stamp (`kb.walk.after_write` keeps it)."""

LINK_PAGE = 100
"""Source sections per page of `walk_index_link_vectors`: a section has tens of links, each with a vector (as
Python floats until the page is converted)."""
VECTOR_PAGE = 500
"""Ids per `walk_index_*_vectors` statement."""


def probe(dimension: int) -> list[float]:
    """The fixed unit vector fingerprints are taken against (the same for every graph of this dimension)."""
    vector = np.random.default_rng(20261128).standard_normal(dimension)
    return (vector / np.linalg.norm(vector)).tolist()


class _Reads:
    """The build's statements, with a progress bar over the nodes they page through and the vectors read."""

    def __init__(self, store: GraphStore, dimension: int, progress: bool) -> None:
        self.store = store
        self.probe = probe(dimension) if dimension else []
        self.vectors_read = 0
        self.updated: int | None = None
        """Entities whose mentions and relations were read again (None: all were read)."""
        self.bar = None
        if progress:
            from tqdm import tqdm

            nodes = {row["label"]: int(row["nodes"] or 0) for row in store.run("walk_index_node_counts")}
            total = 2 * nodes.get("Chunk", 0) + 2 * nodes.get("Entity", 0) + nodes.get("Section", 0)
            self.bar = tqdm(total=total, desc="walk index", unit="node", dynamic_ncols=True)

    def pages(self, statement: str, *, probed: bool = False) -> Iterator[list[dict[str, Any]]]:
        for page in self.store.pages(statement, PAGE, "cursor", {"probe": self.probe} if probed else None,
                                     start=self.store.node_page_start):
            yield page
            self.done(len({row["key"] for row in page}))

    def done(self, count: int, *, more: int = 0) -> None:
        if self.bar is not None:
            self.bar.total += more
            self.bar.update(count)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def build_walk_index(store: GraphStore, stamp: str, *, progress: bool = False, previous: WalkIndex | None = None,
                     update: bool = True) -> WalkIndex:
    """Read the walk's graph from the store, taking unchanged vectors from `previous` (an older index of the
    same graph, or None) and, with `update`, its mentions and relations but those of the entities logged since."""
    started = time.perf_counter()
    meta = store.read_meta() or {}
    reads = _Reads(store, int(meta.get("dimension") or 0), progress)
    if previous is not None and previous.dimension != len(reads.probe):
        previous = None
    held = read_log(store)  # before the graph: what is logged meanwhile is read again next time
    changed = held.since(previous.log, previous.position) if held and previous is not None and update else None
    try:
        index = _build(reads, stamp, previous, changed)
    finally:
        reads.close()
    if held is not None:
        index.log, index.position = held.token, held.end
    log.info("walk index built in %.1f s: %d chunks, %d entities, %d links, %.0f MB (%d vectors read, the others "
             "kept; %s)", time.perf_counter() - started, len(index.chunk_ids), len(index.entity_ids),
             len(index.link_target), index.nbytes() / 1e6, reads.vectors_read,
             "every mention and relation read" if reads.updated is None else
             f"the mentions and relations of {reads.updated} entities read again")
    return index


def _build(reads: _Reads, stamp: str, previous: WalkIndex | None, changed: list[str] | None) -> WalkIndex:
    """The index; vectors taken from `previous` where unchanged, and its mentions and relations but around the
    `changed` entities when those are given (else every one is read)."""
    whole = previous is None or changed is None
    # two threads: while the store answers one statement, this process decodes another's rows
    with ThreadPoolExecutor(max_workers=1) as other:
        reading = other.submit(lambda: (
            _columns(reads, "walk_index_links", ("key", "target_id", "method", "fingerprint"), probed=True,
                     keep=lambda row: row["target_id"] is not None),
            _columns(reads, "walk_index_mentions", ("key", "entities", "counts")) if whole else None,
            _columns(reads, "walk_index_related", ("key", "other_id", "weight", "type"),
                     keep=lambda row: row["other_id"] is not None) if whole else None))
        chunks = _columns(reads, "walk_index_chunks", ("key", "section_id", "fingerprint"), probed=True)
        entities = _columns(reads, "walk_index_entities",
                            ("key", "cursor", "mentions", "relations", "type", "homes", "fingerprint"), probed=True)
        links, mentions_read, related_read = reading.result()
    chunk_order, chunk_ids = _order(chunks["key"])
    entity_order, entity_ids = _order(entities["key"])
    chunk_no = {key.decode(): i for i, key in enumerate(chunk_ids.tolist())}
    entity_no = {key.decode(): i for i, key in enumerate(entity_ids.tolist())}
    section_ids = _sorted_ids([*(key for key in chunks["section_id"] if key is not None),
                               *(home for homes in entities["homes"] for home in homes or []),
                               *links["key"], *links["target_id"]])
    section_no = {key.decode(): i for i, key in enumerate(section_ids.tolist())}

    chunk_section = np.array([section_no.get(key, -1) if key is not None else -1
                              for key in chunks["section_id"]], dtype=np.int32)[chunk_order]
    has_section = chunk_section >= 0
    section_chunk_ptr, section_chunk_idx = _csr(chunk_section[has_section],
                                                np.flatnonzero(has_section).astype(np.int32), len(section_ids))
    chunk_fingerprint = _fingerprints(chunks["fingerprint"])[chunk_order]

    entity_mentions = np.array([np.nan if m is None else float(m) for m in entities["mentions"]],
                               dtype=np.float64)[entity_order]
    entity_relations = np.array([r or 0 for r in entities["relations"]], dtype=np.int64)[entity_order]
    types, entity_type_code = codes(entities["type"])
    entity_type_code = entity_type_code[entity_order]
    home_pairs = [(entity_no[key], section_no[home]) for key, homes in
                  zip(entities["key"], entities["homes"], strict=True) for home in homes or []]
    home_ptr, home_idx = _csr_pairs(home_pairs, len(entity_ids))
    homed_ptr, homed_idx = _csr_pairs([(s, e) for e, s in home_pairs], len(section_ids))
    entity_fingerprint = _fingerprints(entities["fingerprint"])[entity_order]

    if whole:
        entity_at = {cursor: entity_no[key] for cursor, key in zip(entities["cursor"], entities["key"], strict=True)}
        mention_chunk, mention_entity, counts = _mentions(mentions_read, chunk_no, entity_at)
        relations = Relations.of_rows(related_read, entity_no)
        del mentions_read, related_read
    else:
        mention_chunk, mention_entity, counts, relations = updated_edges(
            reads.store, previous, changed, chunk_ids, entity_ids, chunk_no, entity_no)  # type: ignore[arg-type]
        reads.updated = len(set(changed))  # type: ignore[arg-type]
    mention_ptr, mention_idx, mention_count = _csr_weighted(mention_chunk, mention_entity, counts, len(chunk_ids))
    mentioned_ptr, mentioned_idx = _csr(mention_entity, mention_chunk, len(entity_ids))

    related_start, related_end, related_weight, related_types, related_type_code = relations.canonical()
    edges = np.arange(len(related_start))
    not_loop = related_end != related_start
    related_ptr, related_idx = _csr(np.concatenate([related_start, related_end[not_loop]]),
                                    np.concatenate([edges, edges[not_loop]]), len(entity_ids))

    link_source = np.array([section_no[key] for key in links["key"]], dtype=np.int32)
    link_order = np.argsort(link_source, kind="stable")
    link_source = link_source[link_order]
    link_ptr = np.searchsorted(link_source, np.arange(len(section_ids) + 1)).astype(np.int64)
    link_target = np.array([section_no[key] for key in links["target_id"]], dtype=np.int32)[link_order]
    methods = np.array([method or "authored" for method in links["method"]], dtype=object)[link_order]
    link_fingerprint = _fingerprints(links["fingerprint"])[link_order]
    link_keys = [(source, target, method, fingerprint) for source, target, method, fingerprint in zip(
        section_ids[link_source].tolist(), section_ids[link_target].tolist(), methods.tolist(),
        link_fingerprint.tolist(), strict=True)]
    with ThreadPoolExecutor(max_workers=1) as other:
        reading_links = other.submit(_link_vectors, reads, link_keys, previous)
        chunk_vectors, _ = _node_vectors(reads, "walk_index_chunk_vectors", chunk_ids, chunk_fingerprint,
                                         None if previous is None else
                                         (previous.chunk_ids, previous.chunk_fingerprint, previous.chunk_vectors))
        entity_vectors, entity_has_vector = _node_vectors(
            reads, "walk_index_entity_vectors", entity_ids, entity_fingerprint, None if previous is None else
            (previous.entity_ids, previous.entity_fingerprint, previous.entity_vectors))
        link_vectors, link_has_vector = reading_links.result()
    return WalkIndex(
        stamp=stamp, chunk_ids=chunk_ids, chunk_vectors=chunk_vectors, chunk_fingerprint=chunk_fingerprint,
        chunk_section=chunk_section, section_ids=section_ids, section_chunk_ptr=section_chunk_ptr,
        section_chunk_idx=section_chunk_idx, entity_ids=entity_ids, entity_vectors=entity_vectors,
        entity_has_vector=entity_has_vector, entity_fingerprint=entity_fingerprint, entity_mentions=entity_mentions,
        entity_type_code=entity_type_code, entity_types=np.array(types, dtype=str), entity_relations=entity_relations,
        mention_ptr=mention_ptr, mention_idx=mention_idx, mention_count=mention_count,
        mentioned_ptr=mentioned_ptr, mentioned_idx=mentioned_idx, home_ptr=home_ptr, home_idx=home_idx,
        homed_ptr=homed_ptr, homed_idx=homed_idx, related_start=related_start, related_end=related_end,
        related_weight=related_weight, related_type_code=related_type_code, related_types=related_types,
        related_ptr=related_ptr, related_idx=related_idx,
        link_target=link_target, link_ptr=link_ptr, link_authored=methods == "authored",
        link_inferred=methods == "inferred", link_vectors=link_vectors, link_has_vector=link_has_vector,
        link_fingerprint=link_fingerprint)


# -- vectors ------------------------------------------------------------------------------------
def _node_vectors(reads: _Reads, statement: str, ids: np.ndarray, fingerprints: np.ndarray,
                  previous: tuple[np.ndarray, np.ndarray, VectorRows] | None) -> tuple[VectorRows, np.ndarray]:
    """Unit vectors for `ids` (sorted): the previous index's row where id and fingerprint match, else read
    from the store; (vectors, which ids have one)."""
    present = ~np.isnan(fingerprints)
    vectors = VectorRows.empty(len(ids), len(reads.probe), previous[2] if previous is not None else None)
    wanted = present.copy()
    if previous is not None and len(previous[0]) and len(ids):
        old_ids, old_fingerprints, old_vectors = previous
        at = np.minimum(np.searchsorted(old_ids, ids), len(old_ids) - 1)
        same = wanted & (old_ids[at] == ids) & (old_fingerprints[at] == fingerprints)
        vectors.take(np.flatnonzero(same), old_vectors, at[same])
        wanted &= ~same
    numbers = np.flatnonzero(wanted)
    reads.done(0, more=len(numbers))
    for start in range(0, len(numbers), VECTOR_PAGE):
        batch = numbers[start:start + VECTOR_PAGE]
        rows = reads.store.run(statement, {"ids": [bytes(ids[n]).decode() for n in batch]})
        got = {row["key"]: row["embedding"] for row in rows}
        found, has = _unit_vectors([got.get(bytes(ids[n]).decode()) for n in batch], len(reads.probe))
        vectors.put(batch[has], found[has])
        present[batch] = has
        reads.done(len(batch))
    reads.vectors_read += len(numbers)
    return vectors, present


def _link_vectors(reads: _Reads, keys: list[tuple[bytes, bytes, str, float]], previous: WalkIndex | None
                  ) -> tuple[VectorRows, np.ndarray]:
    """Unit context vectors per link (`keys`: source, target, method, fingerprint): the previous index's
    where a link with the same key was, else read with every link of its source section."""
    vectors = VectorRows.empty(len(keys), len(reads.probe), previous.link_vectors if previous is not None else None)
    present = np.array([not np.isnan(key[3]) for key in keys], dtype=bool)
    kept = _previous_links(previous)
    wanted: dict[tuple[bytes, bytes, str, float], list[int]] = {}
    taken: list[tuple[int, int]] = []
    for number, key in enumerate(keys):
        if not present[number]:
            continue
        if key in kept:
            taken.append((number, kept[key]))
        else:
            wanted.setdefault(key, []).append(number)
    if taken:
        pairs = np.array(taken, dtype=np.int64)
        vectors.take(pairs[:, 0], previous.link_vectors, pairs[:, 1])  # type: ignore[union-attr]
    sections = sorted({key[0] for key in wanted})
    reads.vectors_read += sum(len(numbers) for numbers in wanted.values())
    reads.done(0, more=sum(len(numbers) for numbers in wanted.values()))
    for start in range(0, len(sections), LINK_PAGE):
        rows = reads.store.run("walk_index_link_vectors", {
            "section_ids": [section.decode() for section in sections[start:start + LINK_PAGE]],
            "probe": reads.probe})
        for row in rows:
            key = (row["key"].encode(), row["target_id"].encode(), row["method"] or "authored",
                   np.nan if row["fingerprint"] is None else float(row["fingerprint"]))
            numbers = wanted.pop(key, [])
            if numbers and row["embedding"] is not None:
                found, _ = _unit_vectors([row["embedding"]], len(reads.probe))
                vectors.put(np.array(numbers, dtype=np.int64), np.repeat(found, len(numbers), axis=0))
                reads.done(len(numbers))
    for numbers in wanted.values():  # changed again since the fingerprints were read: the stamp check drops it
        present[numbers] = False
    return vectors, present


def _previous_links(previous: WalkIndex | None) -> dict[tuple[bytes, bytes, str, float], int]:
    """(source, target, method, fingerprint) -> link number in the previous index, for links with a vector."""
    if previous is None or not len(previous.link_target):
        return {}
    sources = np.repeat(np.arange(len(previous.section_ids)), np.diff(previous.link_ptr))
    methods = np.where(previous.link_authored, "authored", np.where(previous.link_inferred, "inferred", ""))
    kept = {}
    for number, (source, target, method, fingerprint, has) in enumerate(zip(
            previous.section_ids[sources].tolist(), previous.section_ids[previous.link_target].tolist(),
            methods.tolist(), previous.link_fingerprint.tolist(), previous.link_has_vector.tolist(), strict=True)):
        if has and method:
            kept[(source, target, method, fingerprint)] = number
    return kept


def _fingerprints(values: list[Any]) -> np.ndarray:
    return np.array([np.nan if value is None else float(value) for value in values], dtype=np.float64)


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


# -- rows to arrays -----------------------------------------------------------------------------
def _columns(reads: _Reads, statement: str, names: tuple[str, ...], *, probed: bool = False,
             keep: Callable[[dict[str, Any]], bool] = lambda row: True) -> dict[str, list[Any]]:
    columns: dict[str, list[Any]] = {name: [] for name in names}
    for page in reads.pages(statement, probed=probed):
        rows = [row for row in page if keep(row)]
        for name in names:
            columns[name].extend(row[name] for row in rows)
    return columns


def _mentions(read: dict[str, list[Any]], chunk_no: dict[str, int], entity_at: dict[Any, int]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(chunk number, entity number, count) per mention from the per-chunk lists of `walk_index_mentions`,
    entities given by their page cursor; mentions of a node read in neither (written meanwhile) left out."""
    chunks: list[int] = []
    entities: list[int] = []
    counts: list[float] = []
    for key, refs, numbers in zip(read["key"], read["entities"], read["counts"], strict=True):
        chunk = chunk_no.get(key)
        if chunk is None:
            continue
        for ref, count in zip(refs or [], numbers or [], strict=True):
            entity = entity_at.get(ref)
            if entity is not None:
                chunks.append(chunk)
                entities.append(entity)
                counts.append(float(count))
    return (np.array(chunks, dtype=np.int64), np.array(entities, dtype=np.int64),
            np.array(counts, dtype=np.float64))


def _order(keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The permutation that sorts `keys` by their UTF-8 bytes, and the sorted ids (keys are unique)."""
    encoded = np.array([key.encode() for key in keys]) if keys else np.array([], dtype="S1")
    order = np.argsort(encoded, kind="stable")
    return order, encoded[order]


def _sorted_ids(ids: list[str]) -> np.ndarray:
    """UTF-8 ids in byte order (= code point order), as a fixed-width bytes array."""
    unique = sorted({key.encode() for key in ids})
    return np.array(unique) if unique else np.array([], dtype="S1")


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
    order = np.lexsort((weights, columns, rows))  # counts too: one order for a pair held twice (older graphs)
    return (np.searchsorted(rows[order], np.arange(size + 1)).astype(np.int64), columns[order].astype(np.int32),
            weights[order].astype(np.float64))
