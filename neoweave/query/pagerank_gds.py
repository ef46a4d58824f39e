"""Personalized PageRank on Neo4j Graph Data Science, for deployments that have the GDS plugin: the walk of
`pagerank.personalized_pagerank`, run by `gds.pageRank.stream` over the fetched subgraph.

The subgraph is projected from parameters (node indexes and weighted undirected edges, the same weights as the
Python walk, focus included), so no stored node is read twice; the projection is dropped after the walk.
Scores are normalised to sum to 1 like the Python walk's. A seed without edges is not part of a GDS
projection: it keeps its share of the restart weight, as it does in the Python walk.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from neoweave.query.pagerank import WalkGraph, WalkMatrix

Run = Callable[[str, dict[str, Any]], list[dict[str, Any]]]


def gds_personalized_pagerank(run: Run, graph: WalkGraph, seeds: Mapping[str, float], *, damping: float,
                              focus: float = 0.0, tolerance: float = 1e-8, max_iterations: int = 100
                              ) -> dict[str, float]:
    """node -> PageRank mass, computed by `gds.pageRank.stream` with the seeds as weighted source nodes."""
    matrix = WalkMatrix.of(graph, focus)
    restart = matrix.restart(seeds)
    if not matrix.nodes or restart.sum() <= 0:
        return {}
    connected = set(matrix.starts.tolist()) | set(matrix.ends.tolist())
    sources = [[i, float(restart[i])] for i in range(len(matrix.nodes)) if restart[i] > 0 and i in connected]
    scores = {node: 0.0 for node in matrix.nodes}
    if sources:
        name = f"neoweave_ppr_{uuid.uuid4().hex}"
        edges = [[int(a), int(b), float(w)] for a, b, w in zip(matrix.starts, matrix.ends, matrix.weights,
                                                             strict=True)]
        run("ppr_gds_project", {"graph_name": name, "edges": edges})
        try:
            rows = run("ppr_gds_pagerank", {"graph_name": name, "source_nodes": sources, "damping": damping,
                                            "tolerance": tolerance, "max_iterations": max_iterations})
        finally:
            run("ppr_gds_drop", {"graph_name": name})
        total = sum(float(row["score"]) for row in rows) or 1.0
        walked = sum(weight for _, weight in sources)  # the restart share of the projected seeds
        for row in rows:
            scores[matrix.nodes[int(row["node"])]] = float(row["score"]) / total * walked
    for i, node in enumerate(matrix.nodes):
        if restart[i] > 0 and i not in connected:
            scores[node] = float(restart[i])
    return scores
