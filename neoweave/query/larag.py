"""LARAG: link-aware retrieval along the hyperlinks authors wrote between documentation sections.

Seed with the top-k chunks by vector similarity. Then, from each seed's section, follow outgoing LINKS_TO
edges: at most `n_links` per section and link kind (those whose link context is closest to the question), for up to
`depth` hops, keeping from each followed link's target section the `top_m` chunks closest to the link's
context (cosine between the link-context embedding and the chunk embedding). One visited set is shared by
the whole expansion: each section is expanded once and each chunk appears once; unresolved links are not
edges and are ignored. (n_links, depth, top_m) = (1, 1, 1) as selected in the paper; (0, 0, 0) is plain
top-k. Link contexts are embedded by ingest (authored links) and `enrich kg` (inferred links) and stored on
the edge; retrieval only reads them, and stops with an error naming the step if a followed link has none.

Each hop is one Cypher statement over the whole frontier (`larag_expand`), so the graph work is `depth`
set-oriented queries, not one query per link.

`profile="paper"` runs the method as published (000 l. 221-232): the expansion starts from each seed chunk's own
links (`expand_from="chunk"`, `larag_expand_chunks`), authored links only, the first `n_links` in reading order
(`rank_links="order"`: the question plays no part after the seeds), one visited set of chunks. Hops are taken
breadth-first over the whole frontier where the paper walks depth-first; with the shared visited set and its
depth 1 the two give the same context.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register
from neoweave.query.entity_linking import link_entities
from neoweave.query.ranking import best_first

LINK_KINDS: dict[str, list[str]] = {"authored": ["authored"], "inferred": ["inferred"],
                                    "both": ["authored", "inferred"]}


@register
@dataclass
class LARAG(Strategy):
    name = "larag"
    reads_link_contexts: ClassVar[bool] = True
    paper: ClassVar[dict[str, Any] | None] = {"k": 5, "n_links": 1, "depth": 1, "top_m": 1, "links": "authored",
                                              "entity_seeds": 0, "expand_k": 0, "expand_from": "chunk",
                                              "rank_links": "order"}
    paper_source: ClassVar[str] = "LARAG, 000 l. 221-232 (expansion), 318-344 (k = 5, (1, 1, 1))"

    k: int = 5
    """Seed chunks from vector search."""
    expand_k: int = 0
    """Chunks from vector search whose links are followed (0: the k seeds). Above k, the chunks ranked k+1 to
    expand_k are not returned themselves; only what their links lead to is."""
    n_links: int = 1
    """Links followed per expanded section, per link kind: with `links="both"` a section follows its best
    authored link and its best inferred link (one shared quota let inferred links crowd out the authored ones:
    Python docs FAQ hit@10 0.612 shared vs 0.706 per kind; authored alone 0.671)."""
    depth: int = 1
    """Hops of expansion from the seeds."""
    top_m: int = 1
    """Chunks kept from each followed link's target section."""
    links: str = "both"
    """Which LINKS_TO edges are followed: authored (written in the documents), inferred (from entity mentions,
    `neoweave enrich kg`), or both."""
    entity_seeds: int = 0
    """Home sections of entities named in the question added as seeds (their chunk closest to the question).
    Off by default (not in the paper); 2 measured best on HotpotQA. Needs `neoweave enrich kg`."""
    expand_from: str = "section"
    """section: each seed's whole section follows its links (a chunk's neighbours in the section often hold the
    link that answers); chunk: only the links inside the seed chunk itself, as the paper does."""
    rank_links: str = "question"
    """Which `n_links` links a section or chunk follows: question (the links whose context is closest to the
    question) or order (the first ones in reading order, as the paper does; `expand_from="chunk"` only)."""
    order_linked: str = "link"
    """In which order the linked chunks follow the seeds (what a context budget keeps): link (by the link
    context's cosine to the question) or path (by that plus the best cosine of a seed in the section the link leaves
    from, on later hops of the link that reached it: a link out of the best seed first). The chunks returned are
    the same."""

    def validate(self) -> None:
        self._at_least(1, "k")
        self._at_least(0, "n_links", "depth", "top_m", "entity_seeds", "expand_k")
        if self.links not in LINK_KINDS:
            raise NeoweaveError(f"larag: links must be one of {', '.join(LINK_KINDS)}, got {self.links!r}")
        if self.expand_from not in ("section", "chunk"):
            raise NeoweaveError(f"larag: expand_from must be section or chunk, got {self.expand_from!r}")
        if self.order_linked not in ("link", "path"):
            raise NeoweaveError(f"larag: order_linked must be link or path, got {self.order_linked!r}")
        if self.rank_links not in ("question", "order"):
            raise NeoweaveError(f"larag: rank_links must be question or order, got {self.rank_links!r}")
        if (self.expand_from, self.rank_links) != ("section", "question") and \
                (self.expand_from, self.rank_links) != ("chunk", "order"):
            raise NeoweaveError("larag: expand_from=section ranks links by the question, expand_from=chunk by "
                                f"their order (the paper); got {self.expand_from} with {self.rank_links}",
                                hint="-P larag.profile=paper sets both")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        expanding = self.n_links > 0 and self.top_m > 0
        query_embedding, pool = self._seed(question, max(self.k, self.expand_k if expanding else 0), trace, cost)
        items = pool[:self.k]
        visited_chunks = {item.chunk_id for item in items}
        if self.entity_seeds:
            items += self._entity_seeds(question, query_embedding, visited_chunks, trace, cost)
        if not expanding:
            return items
        sources = items + pool[self.k:]  # the returned seeds, then the near misses that only lend their links
        if self.expand_from == "chunk":
            return items + self._expand_chunks({item.chunk_id: item.section_id for item in sources},
                                               visited_chunks, trace, cost)
        expanded_sections: set[str] = set()
        frontier = list(dict.fromkeys(item.section_id for item in sources))
        reached = {}  # section -> the best cosine to the question on the way in (a seed's, then a link's)
        for item in sources:
            reached[item.section_id] = max(reached.get(item.section_id, -1.0), float(item.score))

        def priority(row: dict[str, Any]) -> float:
            path = reached.get(row["source_section_id"], 0.0) if self.order_linked == "path" else 0.0
            return float(row["link_score"]) + path

        for hop in range(1, self.depth + 1):
            frontier = [section for section in frontier if section not in expanded_sections]
            if not frontier:
                break
            expanded_sections.update(frontier)
            self._skip_unembedded_links("links_missing_context_embedding", {"section_ids": frontier}, trace, cost)
            with cost.timed("graph"):
                rows = self._run(trace, "larag_expand", {
                    "section_ids": frontier, "query_embedding": query_embedding, "n_links": self.n_links,
                    "top_m": self.top_m, "exclude_chunk_ids": sorted(visited_chunks),
                    "methods": LINK_KINDS[self.links]})
            ordered = sorted(rows, key=lambda r: (*best_first(priority(r)),
                                                  *best_first(r["score"], r["chunk_id"])))
            taken = _linked(ordered, visited_chunks, trace, hop, lambda r: {"link_score": float(r["link_score"])})
            items += [item for _, item in taken]
            for row, _ in taken:
                reached[row["section_id"]] = max(reached.get(row["section_id"], -1.0), float(row["link_score"]))
            frontier = list(dict.fromkeys(row["section_id"] for row, _ in taken))
        return items

    def _expand_chunks(self, seeds: dict[str, str], visited: set[str], trace: Trace, cost: Cost) -> list[ContextItem]:
        """The paper's expansion from `seeds` (chunk id -> its section): each frontier chunk's own links in
        reading order, hop by hop over the whole frontier; chunks come in the order of their seed, then of the
        link in it."""
        items: list[ContextItem] = []
        expanded: set[str] = set()
        frontier = dict(seeds)
        for hop in range(1, self.depth + 1):
            frontier = {chunk: section for chunk, section in frontier.items() if chunk not in expanded}
            if not frontier:
                break
            expanded.update(frontier)
            self._skip_unembedded_links("links_missing_context_embedding", {
                "section_ids": sorted(set(frontier.values()))}, trace, cost)
            with cost.timed("graph"):
                rows = self._run(trace, "larag_expand_chunks", {
                    "chunk_ids": list(frontier), "n_links": self.n_links, "top_m": self.top_m,
                    "exclude_chunk_ids": sorted(visited), "methods": LINK_KINDS[self.links]})
            rank = {chunk: index for index, chunk in enumerate(frontier)}
            ordered = sorted(rows, key=lambda r: (rank[r["source_chunk_id"]], r["link_start"], r["link_order"],
                                                  -float(r["score"])))
            taken = _linked(ordered, visited, trace, hop, lambda r: {"from_chunk": r["source_chunk_id"]})
            items += [item for _, item in taken]
            frontier = {row["chunk_id"]: row["section_id"] for row, _ in taken}
        return items

    def _entity_seeds(self, question: str, query_embedding: list[float], visited: set[str], trace: Trace,
                      cost: Cost) -> list[ContextItem]:
        """The question's entities -> their home sections -> each home's chunk closest to the question."""
        with cost.timed("graph"):
            linked = link_entities(lambda name, params: self._run(trace, name, params), question)
            homes: dict[str, str] = {}
            for entity in linked:
                for home in entity.homes:
                    if len(homes) < self.entity_seeds and home not in homes:
                        homes[home] = entity.id
            if not homes:
                return []
            rows = self._run(trace, "larag_entity_seeds", {
                "section_ids": list(homes), "query_embedding": query_embedding, "per_section": 1,
                "exclude_chunk_ids": sorted(visited)})
        items = []
        for row in rows:
            if row["chunk_id"] in visited:
                continue
            visited.add(row["chunk_id"])
            entity_id = homes[row["section_id"]]
            trace.node(entity_id)
            trace.relationship(entity_id, "DESCRIBED_BY", row["section_id"])
            trace.chunk(row["section_id"], row["chunk_id"])
            items.append(ContextItem.from_row(row, "entity", {"entity": entity_id}))
        return items



def _linked(rows: list[dict[str, Any]], visited: set[str], trace: Trace, hop: int,
            details: Callable[[dict[str, Any]], dict[str, Any]]) -> list[tuple[dict[str, Any], ContextItem]]:
    """One hop's rows, in the order to take them -> the chunks not visited yet as context items (a chunk reached
    twice keeps its first way in), each with its row; every followed link goes into the trace."""
    taken = []
    for row in rows:
        trace.node(row["section_id"])
        trace.relationship(row["source_section_id"], "LINKS_TO", row["section_id"])
        if row["chunk_id"] in visited:
            continue
        visited.add(row["chunk_id"])
        trace.chunk(row["section_id"], row["chunk_id"])
        taken.append((row, ContextItem.from_row(row, "link", {
            "hop": hop, "from_section": row["source_section_id"], "link_text": row["link_text"],
            "link_method": row["link_method"], "link_context": row["link_context"], **details(row)})))
    return taken
