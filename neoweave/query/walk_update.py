"""Updating the walk index's mentions and relations from the previous index and the record of change.

A build after a small write used to read every mention and relation again (0.9 s and 1.4 s of statements on the
Python docs graph, most of the ~110 s rebuild at 111k chunks). Every write that changes a mention or a relation
logs its entities in the kg step's record of change (`enrich.kg_changes`) in the same write unit, so the entities
logged since the previous index was built, with the entities new since it, bound what changed:

- mentions: those of one of them are read again (as they are now: a rewritten chunk's lost ones are gone, a new
  chunk's are there); every other mention is kept, renumbered;
- relations: those touching one of them are read again; every other relation is kept, renumbered.

The rows read are the touched entities' mentions and relations, not the chunks': a hub entity touched costs its
own mentions, not every mention of the chunks naming it. The result equals a whole build's
(tests/test_walk_update.py compares every array after a history of writes).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from neoweave.query.walk_index import WalkIndex
from neoweave.store.base import GraphStore

IDS_PAGE = 500
"""Ids per statement of the update."""


def codes(values: Iterable[str | None]) -> tuple[list[str], np.ndarray]:
    """The distinct values sorted, and each value's number among them (-1 for None)."""
    values = list(values)
    names = sorted({value for value in values if value is not None})
    number = {name: i for i, name in enumerate(names)}
    return names, np.array([number.get(value, -1) for value in values], dtype=np.int32)  # type: ignore[arg-type]


@dataclass
class Relations:
    """RELATED edges as entity numbers, weights and types, in any order."""

    start: np.ndarray
    end: np.ndarray
    weight: np.ndarray
    types: list[str | None]

    @classmethod
    def of_rows(cls, rows: dict[str, list[Any]], entity_no: dict[str, int]) -> Relations:
        """From `walk_index_related*` columns (key, other_id, weight, type); edges to an entity not read are left
        out."""
        kept = [i for i, (key, other) in enumerate(zip(rows["key"], rows["other_id"], strict=True))
                if key in entity_no and other in entity_no]
        return cls(np.array([entity_no[rows["key"][i]] for i in kept], dtype=np.int64),
                   np.array([entity_no[rows["other_id"][i]] for i in kept], dtype=np.int64),
                   np.array([1.0 if rows["weight"][i] is None else float(rows["weight"][i]) for i in kept],
                            dtype=np.float64),
                   [rows["type"][i] for i in kept])

    def __add__(self, other: Relations) -> Relations:
        return Relations(np.concatenate([self.start, other.start]), np.concatenate([self.end, other.end]),
                         np.concatenate([self.weight, other.weight]), [*self.types, *other.types])

    def canonical(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(start, end, weight, type names, type codes) ordered by start, end, type and weight: one order for the
        same edges however they were read (the store's order is its storage order)."""
        names, type_code = codes(self.types)
        order = np.lexsort((self.weight, type_code, self.end, self.start))
        return (self.start[order].astype(np.int32), self.end[order].astype(np.int32), self.weight[order],
                np.array(names, dtype=str), type_code[order])


def renumber(old_ids: np.ndarray, new_ids: np.ndarray) -> np.ndarray:
    """For each of the sorted `old_ids`, its number among the sorted `new_ids`, -1 where it is gone."""
    if not len(new_ids) or not len(old_ids):
        return np.full(len(old_ids), -1, dtype=np.int64)
    at = np.minimum(np.searchsorted(new_ids, old_ids), len(new_ids) - 1)
    return np.where(new_ids[at] == old_ids, at, -1).astype(np.int64)


def updated_edges(store: GraphStore, previous: WalkIndex, changed: Sequence[str], chunk_ids: np.ndarray,
                  entity_ids: np.ndarray, chunk_no: dict[str, int], entity_no: dict[str, int]
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, Relations]:
    """(chunk, entity, count) per mention and the relations of the graph now, as numbers among `chunk_ids` and
    `entity_ids` (the nodes read by this build), from `previous` and the entities `changed` since it."""
    chunk_map = renumber(previous.chunk_ids, chunk_ids)
    entity_map = renumber(previous.entity_ids, entity_ids)
    # the entities to read around: those logged, and those new since `previous` (each was logged when written)
    in_previous = np.zeros(len(entity_ids), dtype=bool)
    in_previous[entity_map[entity_map >= 0]] = True
    touched = set(changed) | {WalkIndex.id_of(entity_ids, n) for n in np.flatnonzero(~in_previous)}
    touched_old = np.zeros(len(previous.entity_ids), dtype=bool)
    touched_old[previous.numbers(previous.entity_ids, touched)] = True

    # mentions: those of the touched entities as they are now; every other one as it was (renumbered; those of a
    # chunk or entity gone are left out, as a whole build leaves them out)
    old_chunk = np.repeat(np.arange(len(previous.chunk_ids)), np.diff(previous.mention_ptr))
    new_chunk, new_entity = chunk_map[old_chunk], entity_map[previous.mention_idx]
    keep = (new_chunk >= 0) & (new_entity >= 0) & ~touched_old[previous.mention_idx]
    chunks, entities, counts = [new_chunk[keep]], [new_entity[keep]], [previous.mention_count[keep]]
    ids = sorted(touched)
    for start in range(0, len(ids), IDS_PAGE):
        rows = [row for row in store.run("walk_index_mentions_of", {"entity_ids": ids[start:start + IDS_PAGE]})
                if row["key"] in chunk_no and row["entity_id"] in entity_no]
        chunks.append(np.array([chunk_no[row["key"]] for row in rows], dtype=np.int64))
        entities.append(np.array([entity_no[row["entity_id"]] for row in rows], dtype=np.int64))
        counts.append(np.array([float(row["count"]) for row in rows], dtype=np.float64))

    # relations
    old_start, old_end = previous.related_start, previous.related_end
    kept = ~touched_old[old_start] & ~touched_old[old_end]
    kept &= (entity_map[old_start] >= 0) & (entity_map[old_end] >= 0)
    old_types = [str(previous.related_types[code]) if code >= 0 else None
                 for code in previous.related_type_code[kept].tolist()]
    relations = Relations(entity_map[old_start[kept]], entity_map[old_end[kept]], previous.related_weight[kept],
                          old_types)
    read: dict[str, list[Any]] = {"key": [], "other_id": [], "weight": [], "type": []}
    for start in range(0, len(ids), IDS_PAGE):
        for row in store.run("walk_index_related_of", {"entity_ids": ids[start:start + IDS_PAGE]}):
            if row["outgoing"] or row["key"] not in touched:  # an edge between two touched ones: its outgoing half
                for name in read:
                    read[name].append(row[name])
    relations = relations + Relations.of_rows(read, entity_no)
    return (np.concatenate(chunks), np.concatenate(entities), np.concatenate(counts), relations)
