"""Graph-walk retrieval: personalized PageRank over entities and chunks (HippoRAG 2's walk, run on the stored
graph, over an index built without an LLM).

1. Seeds. The question's entities (`entity_linking.link_question`: names in the question, full-text hits over
   names and aliases, the nearest entity vectors), each weighted `link score / mentions ** mention_exponent`
   (HippoRAG 2 divides a phrase's weight by the passages it occurs in: a rare entity says more than a common
   one), generic ones (concepts, dates, names the question writes in lowercase) capped at `generic_weight`;
   and the `dense_k` chunks closest to the question, each weighted `chunk_weight * (cosine - min) / (max -
   min)` over those chunks (HippoRAG 2's passage_node_weight 0.05). The restart vector is their sum,
   normalised to 1. With no entity linked, the dense chunks alone start the walk (equally weighted when
   `chunk_weight` is 0).
2. Subgraph. `hops` rounds of `ppr_expand`, one statement each: round 1 expands every seed; each later round
   the `beam` not yet expanded nodes with the most mass in a walk over what was fetched so far. A node adds at
   most `per_node` edges per kind, the ones closest to the question or the heaviest; hub entities (over
   `max_mentions` mentions) take no part. So the subgraph is bounded by `(seeds + (hops - 1) * beam) *
   per_node * 5` edges whatever the size of the graph. Edges through sections are walked between chunks:
   DESCRIBED_BY from an entity to the chunks of its home section, LINKS_TO from a chunk to the best chunk of
   each section its section links to.
3. Walk. Personalized PageRank (`damping` = probability of following an edge, 0.5 as in HippoRAG) over the
   undirected subgraph, each edge weighted by its kind's `*_weight` times exp(focus * (cosine(u) + cosine(v)))
   (a walk that leans towards what resembles the question); the top-k chunks by mass are the context.

The trace carries the seeds with their share of the restart weight, the top nodes with their mass, and the
stored relationships behind the walk edges among them. Needs `neoweave enrich kg` (without it only the dense
chunks and their links take part: a walk over the document graph).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register, servable_chunks
from neoweave.query.entity_linking import comparison_sides, link_question, written_as
from neoweave.query.pagerank import WalkGraph, personalized_pagerank
from neoweave.query.pagerank_gds import gds_personalized_pagerank
from neoweave.query.question_types import classify_rules
from neoweave.query.ranking import best_first
from neoweave.query.rerank import rerank
from neoweave.query.walk_expand import expand, missing_link_contexts
from neoweave.query.walk_index import WALK_INDEX_USES, WalkIndex, walk_index_for

GENERIC_TYPES = frozenset({"concept", "date", "time"})
LINK_KINDS: dict[str, list[str]] = {"authored": ["authored"], "inferred": ["inferred"],
                                    "both": ["authored", "inferred"], "none": []}


@dataclass(frozen=True)
class SeedSources:
    """What the restart weights are made of; the weights follow once the expansion brings mention counts."""

    linked: dict[str, float]
    """Entity id -> link score (`entity_linking.link_question`)."""
    common: dict[str, int]
    """Linked entities the corpus writes as common nouns -> mentions of the common noun."""
    sides: set[str]
    """The entities a comparison question names."""
    dense: list[dict]
    """The `dense_k` chunks closest to the question (`chunk_id`, `score`)."""


@register
@dataclass
class PPRRetriever(Strategy):
    name = "ppr"
    requires = ("kg",)
    reads_link_contexts: ClassVar[bool] = True  # ppr_expand ranks a chunk's links by their context embedding

    k: int = 5
    """Chunks returned, by PageRank mass."""
    damping: float = 0.5
    """Probability that the walk follows an edge rather than jumping back to a seed (HippoRAG: 0.5)."""
    dense_k: int = 10
    """Chunks closest to the question taken as seeds."""
    chunk_weight: float = 0.05
    """Seed weight of the best dense chunk relative to an entity seed of weight 1 (HippoRAG 2's
    passage_node_weight)."""
    generic_weight: float = 0.1
    """Seed factor of a linked entity that looks generic: not a name (types in `GENERIC_TYPES`: noun-phrase
    concepts, dates), or matched only by words the question writes in lowercase ("city", "series")."""
    common_nouns: bool = True
    """Treat as generic also the linked entities the corpus writes as common nouns: named without a word written
    like a name, or whose normalised name is a concept's mentioned at least as often ("Film Director" tagged once
    as a name, "film director" a concept in ten chunks; `entity_linking.written_as`). Their seed is
    capped at `generic_weight` and divided by the mentions of the common noun, not of the rare name."""
    vector_weight: float = 1.0
    """Seed factor of an entity linked only by its embedding's cosine to the question (a neighbour of the
    question's meaning, not a name it writes)."""
    sibling_weight: float = 0.1
    """Seed factor (besides `vector_weight`) of an entity linked by embedding whose name shares a word with a
    name the question writes, though it is not that name ("Heinkel HD 26" for a question naming "Heinkel HD
    23", "County Kerry" for "Kerry Saxby"): the question named the other one, so it weighs less than a generic
    word (recognition memory, HippoRAG 2's filter, done by the names instead of an LLM; 0 drops them, 1 treats
    them as any entity linked by embedding)."""
    mention_exponent: float = 1.0
    """Entity seed weight = link score / mentions ** mention_exponent: 1 is HippoRAG 2's inverse frequency,
    0 weighs every linked entity alike."""
    comparison_exponent: float = 0.0
    """`mention_exponent` of the sides of a comparison question (`question_types.classify_rules`): the entities
    it names in full (`entity_linking.comparison_sides`). The question asks about each side however often the
    corpus mentions it: divided by its mentions, the better-known side would take the walk away from the other's
    bridge."""
    entity_k: int = 3
    """Entities linked by embedding similarity to the question (besides names found in it)."""
    min_entity_similarity: float = 0.5
    """Embedding-linked entities below this cosine to the question are not seeds."""
    hops: int = 2
    """Expansion rounds around the seeds (each one `ppr_expand` statement)."""
    beam: int = 20
    """Nodes expanded in each round after the first: those with the most mass so far."""
    per_node: int = 10
    """Edges fetched per expanded node and edge kind."""
    max_mentions: int = 200
    """Entities mentioned more often than this are hubs: never expanded nor reached (reading their mentions would
    cost more than the rest of the walk, and under inverse-frequency weighting each carries little)."""
    links: str = "both"
    """LINKS_TO edges walked: authored, inferred (from entity mentions), both, or none."""
    mention_weight: float = 1.0
    """Edge weight of MENTIONS (chunk - entity)."""
    relation_weight: float = 1.0
    """Edge weight of RELATED (entity - entity), times the relation's own weight."""
    home_weight: float = 4.0
    """Edge weight of DESCRIBED_BY (entity - a chunk of the section whose title names it): the page about an
    entity is worth more than a passing mention (HotpotQA-100 perfect@5 0.86 at 1, 0.89 at 4 with links 16)."""
    link_weight: float = 16.0
    """Edge weight of LINKS_TO (chunk of the linking section - chunk of the linked section): a link is the
    author's (or a mention's) pointer to the page about the thing, the bridge of a multi-hop question
    (HotpotQA-100 perfect@5 0.64 without links, 0.84 at 4, 0.89 at 16)."""
    focus: float = 3.0
    """How much the walk leans towards nodes similar to the question: edge weights times
    exp(focus * (cosine(u) + cosine(v))). 0 is HippoRAG's plain walk (HotpotQA-100 perfect@5 0.68 at 0, 0.74 at
    3 before links and homes were weighted)."""
    walk_index: str = "auto"
    """Where the expansion reads the graph: auto (the walk index, `query.walk_index`, when one was built at the
    graph's current write stamp, else the store), build (the walk index, built first when it is not current:
    the first question pays for it), store (a `ppr_expand` statement per hop). The walk is the same either way."""
    engine: str = "python"
    """Where the PageRank runs: python (scipy, any store) or gds (Neo4j with the Graph Data Science plugin:
    `gds.pageRank.stream` over the same subgraph and weights)."""
    trace_nodes: int = 20
    """Top nodes by mass recorded in the trace."""
    rerank: int = 0
    """Candidates from the walk (the top ones by mass) that one LLM call reorders before the first k are kept
    (`query.rerank`; 20 in the vector-graph-rag recipe); 0 is off. Costs an LLM call per question: see
    docs/strategies/ppr.md."""
    rerank_words: int = 60
    """Words of each candidate shown to the reranking model (after its title)."""
    rerank_max_tokens: int = 48
    """Length cap of the reranking answer (a JSON list of numbers)."""

    @classmethod
    def wants_llm(cls, overrides: dict[str, Any] | None = None) -> bool:
        """Only the optional rerank stage calls the LLM."""
        return int({"rerank": cls.rerank, **(overrides or {})}["rerank"] or 0) > 0

    def validate(self) -> None:
        self._at_least(1, "k", "hops")
        self._at_least(0, "dense_k", "entity_k", "beam", "per_node", "max_mentions", "trace_nodes", "rerank")
        self._at_least(1, "rerank_words", "rerank_max_tokens")
        if self.rerank and self.llm is None:
            raise NeoweaveError("ppr: rerank needs an LLM", hint="configure [llm], or pass -P ppr.rerank=0")
        if not 0 <= self.damping < 1:
            raise NeoweaveError(f"ppr: damping must be in [0, 1), got {self.damping}")
        if self.links not in LINK_KINDS:
            raise NeoweaveError(f"ppr: links must be one of {', '.join(LINK_KINDS)}, got {self.links!r}")
        if self.walk_index not in WALK_INDEX_USES:
            raise NeoweaveError(f"ppr: walk_index must be one of {', '.join(WALK_INDEX_USES)}, "
                                f"got {self.walk_index!r}")
        if self.engine not in ("python", "gds"):
            raise NeoweaveError(f"ppr: engine must be python or gds, got {self.engine!r}")
        if self.engine == "gds" and self.store.backend != "neo4j":
            raise NeoweaveError(f"ppr: engine gds needs the neo4j store with the Graph Data Science plugin; "
                                f"this store is {self.store.backend}")
        self._at_least(0, "chunk_weight", "generic_weight", "sibling_weight", "vector_weight", "mention_exponent",
                       "comparison_exponent", "mention_weight", "relation_weight", "home_weight", "link_weight",
                       "focus")

    def _type_weights(self) -> dict[str, float]:
        return {"MENTIONS": self.mention_weight, "RELATED": self.relation_weight, "DESCRIBED_BY": self.home_weight,
                "LINKS_TO": self.link_weight}

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)
        graph = WalkGraph()
        with cost.timed("graph"):
            dense = self._run(trace, "chunk_vector_search", {"k": self.dense_k, "embedding": embedding}) \
                if self.dense_k else []
            linked = link_question(lambda name, params: self._run(trace, name, params), self.store, question,
                                   embedding, entity_k=self.entity_k, min_similarity=self.min_entity_similarity,
                                   lowercase_score=self.generic_weight, vector_factor=self.vector_weight,
                                   sibling_factor=self.sibling_weight,
                                   strategy=self.name)
            comparison = classify_rules(question) == "comparison"
            written = written_as(lambda name, params: self._run(trace, name, params), list(linked),
                                 GENERIC_TYPES) if self.common_nouns or comparison else {}
        common = {entity: how.common_mentions for entity, how in written.items()
                  if self.common_nouns and how.common_mentions is not None}
        sides = comparison_sides(question, linked, written) if comparison else set()
        for row in dense:
            graph.add_node(row["chunk_id"], "Chunk", float(row["score"]))
        for entity_id in linked:
            graph.add_node(entity_id, "Entity")
        if not graph.labels:
            return []
        with cost.timed("graph"):
            index = self._index(result)
        seeds = self._fetch_subgraph(graph, SeedSources(linked, common, sides, dense), embedding, trace, cost, index)
        if not any(weight > 0 for weight in seeds.values()):
            return []  # every seed weighed 0 (generic_weight 0 and no dense chunks): nowhere to start
        with cost.timed("walk"):
            mass = self._walk(graph, seeds, trace)
            ranked = sorted((n for n, label in graph.labels.items() if label == "Chunk"),
                            key=lambda n: best_first(mass.get(n, 0.0), n))[:max(self.k, self.rerank)]
        with cost.timed("graph"):
            rows = {row["chunk_id"]: row for row in servable_chunks(self._run(trace, "chunk_contexts", {
                "chunk_ids": ranked, "embedding": embedding}), trace, self.name)} if ranked else {}
        total = sum(weight for weight in seeds.values() if weight > 0) or 1.0
        trace.seeds = {node: weight / total for node, weight in sorted(seeds.items(), key=lambda s: (-s[1], s[0]))
                       if weight > 0}
        items = [ContextItem.from_row({**rows[chunk_id], "score": mass[chunk_id]}, "walk", {
                     "seed_share": trace.seeds.get(chunk_id, 0.0), "similarity": float(rows[chunk_id]["score"])})
                 for chunk_id in ranked if chunk_id in rows]  # a chunk deleted meanwhile drops out
        if self.rerank:
            items = rerank(self.llm, question, items, cost, passage_words=self.rerank_words,
                           max_tokens=self.rerank_max_tokens)
        items = items[:self.k]
        self._record(trace, graph, mass, [item.chunk_id for item in items])
        return items

    def _index(self, result: RetrievalResult) -> WalkIndex | None:
        """The walk index to expand over, or None to read the store; which one is in the result's parameters
        (`expanded_over`)."""
        index = walk_index_for(self.store, self.walk_index)
        result.parameters["expanded_over"] = "walk index" if index is not None else "store"
        return index

    def _fetch_subgraph(self, graph: WalkGraph, sources: SeedSources, embedding: list[float], trace: Trace,
                        cost: Cost, index: WalkIndex | None = None) -> dict[str, float]:
        """Grow `graph` from its seed nodes hop by hop (see the module docstring); returns the seed weights."""
        seeds: dict[str, float] = {}
        expanded: set[str] = set()
        frontier = list(graph.labels)
        for hop in range(1, self.hops + 1):
            chunks = [node for node in frontier if graph.labels[node] == "Chunk"]
            if chunks and self.link_weight and LINK_KINDS[self.links]:
                if index is None:
                    self._skip_unembedded_links("chunk_links_missing_context_embedding", {
                        "chunk_ids": chunks, "link_methods": LINK_KINDS[self.links]}, trace, cost)
                else:
                    trace.skip_links(self.name, ((row["source_id"], row["target_id"]) for row in
                                                 missing_link_contexts(index, chunks, LINK_KINDS[self.links])))
            with cost.timed("graph"):
                self._expand(frontier, graph, embedding, trace, index)
            expanded.update(frontier)
            with cost.timed("walk"):
                seeds = self._seeds(sources, graph)  # mention counts arrive with the expansion
                if hop == self.hops:
                    break
                mass = self._walk(graph, seeds, trace)
                frontier = sorted((n for n in graph.labels if n not in expanded),
                                  key=lambda n: (-mass.get(n, 0.0), n))[:self.beam]
            if not frontier:
                break
        return seeds

    def _walk(self, graph: WalkGraph, seeds: dict[str, float], trace: Trace) -> dict[str, float]:
        if self.engine == "gds":
            return gds_personalized_pagerank(lambda name, params: self._run(trace, name, params), graph, seeds,
                                             damping=self.damping, focus=self.focus)
        return personalized_pagerank(graph, seeds, damping=self.damping, focus=self.focus)

    def _expand(self, frontier: list[str], graph: WalkGraph, embedding: list[float], trace: Trace,
                index: WalkIndex | None) -> None:
        by_label: dict[str, list[str]] = {"Entity": [], "Chunk": []}
        for node in frontier:
            by_label[graph.labels[node]].append(node)
        if index is not None:
            graph.add_rows(expand(index, by_label["Entity"], by_label["Chunk"], embedding, per_node=self.per_node,
                                  max_mentions=self.max_mentions, link_methods=LINK_KINDS[self.links]),
                           self._type_weights())
            return
        rows = self._run(trace, "ppr_expand", {
            "entity_ids": by_label["Entity"], "chunk_ids": by_label["Chunk"],
            "embedding": embedding, "per_node": self.per_node, "max_mentions": self.max_mentions,
            "link_methods": LINK_KINDS[self.links]})
        graph.add_rows(rows, self._type_weights())

    def _seeds(self, sources: SeedSources, graph: WalkGraph) -> dict[str, float]:
        """The restart weights (see the module docstring), before normalisation."""
        seeds: dict[str, float] = {}
        common, dense = sources.common, sources.dense
        for entity, score in sources.linked.items():
            if entity in common or graph.types.get(entity) in GENERIC_TYPES:
                score = min(score, self.generic_weight)
            mentions = max(graph.mentions.get(entity, 1.0), common.get(entity, 0))
            exponent = self.comparison_exponent if entity in sources.sides else self.mention_exponent
            seeds[entity] = score / max(1.0, mentions) ** exponent
        if dense and self.chunk_weight:
            scores = [float(row["score"]) for row in dense]
            low, high = min(scores), max(scores)
            for row, score in zip(dense, scores, strict=True):
                scaled = (score - low) / (high - low) if high > low else 1.0
                seeds[row["chunk_id"]] = seeds.get(row["chunk_id"], 0.0) + self.chunk_weight * scaled
        if not any(weight > 0 for weight in seeds.values()):  # no weight at all: the dense chunks, equally
            seeds = {row["chunk_id"]: 1.0 for row in dense}
        return seeds

    def _record(self, trace: Trace, graph: WalkGraph, mass: dict[str, float], returned: list[str]) -> None:
        """Top nodes with their mass, and the edges among seeds, top nodes and returned chunks."""
        top = sorted(mass, key=lambda n: best_first(mass[n], n))[:self.trace_nodes]
        trace.scores = {node: mass[node] for node in top}
        for chunk_id in returned:
            trace.scores.setdefault(chunk_id, mass[chunk_id])
        shown = set(trace.scores) | set(trace.seeds)
        for node in trace.scores:
            trace.node(node)
        for (start, rel_type, end), (via_start, via_end) in graph.via.items():
            if start in shown and end in shown:
                _trace_edge(trace, start, rel_type, end, via_start, via_end)


def _trace_edge(trace: Trace, start: str, rel_type: str, end: str, via_start: str | None, via_end: str | None
                ) -> None:
    """A walk edge as the stored relationships it stands for (through sections)."""
    if rel_type == "DESCRIBED_BY" and via_end:  # entity -> home section -> chunk
        trace.node(via_end)
        trace.relationship(start, "DESCRIBED_BY", via_end)
        trace.relationship(via_end, "HAS_CHUNK", end)
    elif rel_type == "LINKS_TO" and via_start and via_end:  # chunk <- section -> section -> chunk
        for section in (via_start, via_end):
            trace.node(section)
        trace.relationship(via_start, "HAS_CHUNK", start)
        trace.relationship(via_start, "LINKS_TO", via_end)
        trace.relationship(via_end, "HAS_CHUNK", end)
    else:
        trace.relationship(start, rel_type, end)
