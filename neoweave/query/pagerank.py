"""Personalized PageRank over a small fetched subgraph, in Python on a scipy sparse matrix (no GDS, no APOC).

The walk is undirected, as in HippoRAG: a chunk reached from an entity passes mass back to the entities it
mentions, a linked chunk to the chunk linking to it. An edge fetched from both of its ends counts once.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import sparse


@dataclass
class WalkGraph:
    """Nodes (id -> label), weighted edges keyed by their stored direction and type, and what the walk weighs
    them by: each node's cosine to the question, each entity's mention count and type."""

    labels: dict[str, str] = field(default_factory=dict)
    edges: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (start, type, end) -> weight
    via: dict[tuple[str, str, str], tuple[str | None, str | None]] = field(default_factory=dict)
    """Sections an edge between chunks (or an entity and a chunk) passes through: (start side, end side)."""
    relevance: dict[str, float] = field(default_factory=dict)  # node -> cosine to the question
    mentions: dict[str, float] = field(default_factory=dict)  # entity id -> mention count
    types: dict[str, str] = field(default_factory=dict)  # entity id -> entity type

    def add_rows(self, rows: Iterable[Mapping[str, Any]], type_weights: Mapping[str, float]) -> None:
        """Add `ppr_expand` rows; an edge seen twice keeps its larger weight; self-loops are dropped."""
        for row in rows:
            factor = type_weights.get(row["type"], 0.0)
            start, end = row["start_id"], row["end_id"]
            if factor <= 0 or start is None or end is None or start == end:
                continue
            for node, label, score in ((start, row["start_label"], row["start_score"]),
                                       (end, row["end_label"], row["end_score"])):
                self.add_node(node, label, None if score is None else float(score))
            if row["entity_id"] is not None:
                self.mentions[row["entity_id"]] = float(row["mentions"] or 0.0)
                self.types[row["entity_id"]] = row["entity_type"] or ""
            key = (start, row["type"], end)
            weight = factor * float(row["weight"] if row["weight"] is not None else 1.0)
            if weight > self.edges.get(key, 0.0):
                self.edges[key] = weight
                self.via[key] = (row["via_start"], row["via_end"])

    def add_node(self, node: str, label: str, relevance: float | None = None) -> None:
        self.labels.setdefault(node, label)
        if relevance is not None:
            self.relevance[node] = relevance


@dataclass
class WalkMatrix:
    """The subgraph as arrays: node order, and each undirected edge once with its walk weight."""

    nodes: list[str]
    index: dict[str, int]
    starts: np.ndarray
    ends: np.ndarray
    weights: np.ndarray

    @classmethod
    def of(cls, graph: WalkGraph, focus: float = 0.0) -> WalkMatrix:
        """Edge weights times exp(focus * (r(u) + r(v))), r a node's cosine to the question (0 without one)."""
        nodes = list(graph.labels)
        index = {node: i for i, node in enumerate(nodes)}
        count = len(graph.edges)
        starts = np.fromiter((index[s] for s, _, _ in graph.edges), dtype=np.int64, count=count)
        ends = np.fromiter((index[e] for _, _, e in graph.edges), dtype=np.int64, count=count)
        weights = np.fromiter(graph.edges.values(), dtype=np.float64, count=count)
        if focus and count:
            relevance = np.fromiter((graph.relevance.get(node, 0.0) for node in nodes), dtype=np.float64,
                                    count=len(nodes))
            weights = weights * np.exp(focus * (relevance[starts] + relevance[ends]))
        return cls(nodes, index, starts, ends, weights)

    def restart(self, seeds: Mapping[str, float]) -> np.ndarray:
        """The seed weights as a vector over `nodes`, normalised to 1 (all zero when no seed is in the graph)."""
        vector = np.zeros(len(self.nodes))
        for node, weight in seeds.items():
            if node in self.index and weight > 0:
                vector[self.index[node]] += weight
        total = vector.sum()
        return vector / total if total > 0 else vector


def personalized_pagerank(graph: WalkGraph, seeds: Mapping[str, float], *, damping: float, focus: float = 0.0,
                          tolerance: float = 1e-8, max_iterations: int = 100) -> dict[str, float]:
    """node -> stationary probability of a walk that follows an edge with probability `damping` (chosen in
    proportion to edge weight) and otherwise jumps back to a seed (in proportion to its weight).

    With `focus` > 0 the walk leans towards the question: an edge's weight is multiplied by
    exp(focus * (r(u) + r(v))), r the cosine of each end to the question (0 for a node without one), so from any
    node the walk steps to a neighbour in proportion to exp(focus * r(neighbour)) (a topic-sensitive walk).

    A node without edges sends its mass back to the seeds. The seeds need not be normalised; seeds outside the
    graph and non-positive weights are ignored. Iterates until the L1 change is below `tolerance`."""
    matrix = WalkMatrix.of(graph, focus)
    restart = matrix.restart(seeds)
    size = len(matrix.nodes)
    if size == 0 or restart.sum() <= 0:
        return {}
    adjacency = sparse.coo_matrix((np.concatenate([matrix.weights, matrix.weights]),
                                   (np.concatenate([matrix.starts, matrix.ends]),
                                    np.concatenate([matrix.ends, matrix.starts]))),
                                  shape=(size, size)).tocsr()  # duplicate (i, j) entries are summed
    degree = np.asarray(adjacency.sum(axis=1)).ravel()
    dangling = degree == 0
    inverse = np.divide(1.0, degree, out=np.zeros(size), where=~dangling)
    transition_t = (sparse.diags(inverse) @ adjacency).T.tocsr()  # column-stochastic over nodes with edges
    scores = restart.copy()
    for _ in range(max_iterations):
        walked = transition_t @ scores + scores[dangling].sum() * restart
        updated = (1 - damping) * restart + damping * walked
        change = np.abs(updated - scores).sum()
        scores = updated
        if change < tolerance:
            break
    return {node: float(scores[i]) for i, node in enumerate(matrix.nodes)}
