"""KG RAG (the thesis's KG-Graph RAG): the question's entities, their relations within 1-2 hops, and chunks.

1. Link the question to entities: word n-grams equal to an entity's normalised name (longest first) and
   the entities whose embeddings (names; LLM entities with their description) are closest to the question;
   with `link_fulltext`, also full-text hits over entity names and aliases whose words all occur in it.
2. Take the linked entities' relations (`RELATED`, either direction), each entity's strongest
   `per_entity`, scored by the cosine between the question and the entity at the other end plus
   `weight_factor * ln(1 + weight)`; then the same from the `beam` best new entities (hop 2), decayed.
3. Keep the best `max_facts` relations (one per entity pair) as facts, with their source chunk ids, and
   give the prompt a facts block beside the top-k vector chunks; the `fact_chunks` best-supported source
   chunks of the top facts join the context too (origin "fact").

Every step is one set-oriented statement over the whole frontier: 4-6 statements per question. With a current
walk index (`query.walk_index`, built by `enrich kg`), step 2 scores the hops from the index and one statement
reads the kept facts' texts (`query.walk_relations`): the same facts, one or two statements fewer.
Needs `neoweave enrich kg`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.query.base import (
    EVERY_RELATION,
    MAX_CHUNKS_PER_FACT,
    ContextItem,
    Cost,
    Fact,
    RetrievalResult,
    Strategy,
    Trace,
    register,
    servable_chunks,
)
from neoweave.query.entity_linking import link_question
from neoweave.query.ranking import best_first
from neoweave.query.walk_index import WALK_INDEX_USES, WalkIndex, walk_index_for
from neoweave.query.walk_relations import relation_candidates

Found = tuple[dict[str, Any], float, int]
"""A relation reached by the hops: its row (seen from the entity it was reached from), score and hop."""


@register
@dataclass
class KGRetriever(Strategy):
    name = "kg"
    requires = ("kg",)

    k: int = 5
    """Chunks from vector search (the same seeds as naive RAG)."""
    entity_k: int = 3
    """Entities linked by embedding similarity to the question (besides names found in it)."""
    min_entity_similarity: float = 0.5
    """Embedding-linked entities below this cosine to the question are not used."""
    link_fulltext: bool = False
    """Also link entities through the full-text index over names and aliases (every word of a name or alias
    in the question, in any order), besides exact n-gram names and embeddings. Off by default: it changed no
    hit, recall or MRR on HotpotQA-100 or the Python docs FAQ, and its any-word search over every entity name
    cost 2.5 ms per question on a 27k-chunk graph, growing with the number of names."""
    hops: int = 2
    """Relation hops from the question's entities (1 or 2, as in the thesis)."""
    per_entity: int = 10
    """Relations kept per expanded entity (a hub entity has thousands)."""
    beam: int = 5
    """Hop-1 neighbours expanded at hop 2 (the best scored)."""
    max_degree: int = 500
    """Entities with more relations than this (hubs: "Python" in Python's docs, "United States") are not
    expanded; their relations are still reached from the entity at the other end. Scoring a hub's thousands
    of relations dominated kg's latency and rarely ranked a useful fact first. The count is the one `enrich kg`
    records on each entity (a graph enriched before it existed expands every entity until `enrich kg` runs
    again)."""
    hop_decay: float = 0.8
    """Score factor of a hop-2 relation."""
    weight_factor: float = 0.05
    """Weight bonus in a relation's score: cosine(question, other end) + weight_factor * ln(1 + weight)."""
    max_facts: int = 15
    """Facts (relations) given to the prompt."""
    fact_chunks: int = 2
    """Source chunks of the top facts added to the context (the one closest to the question per fact)."""
    walk_index: str = "auto"
    """Where the hops read relations: auto (the walk index, `query.walk_index`, when one is current at the
    graph's write stamp, else the store), build (the index, built first when it is not current), store (a
    `kg_entity_relations` statement per hop). The facts are the same either way."""

    def validate(self) -> None:
        self._at_least(0, "k", "entity_k", "per_entity", "beam", "max_facts", "fact_chunks")
        self._at_least(1, "max_degree")
        if self.hops not in (0, 1, 2):
            raise NeoweaveError(f"kg: hops must be 0, 1 or 2, got {self.hops}")
        if not 0 <= self.hop_decay <= 1:
            raise NeoweaveError(f"kg: hop_decay must be in [0, 1], got {self.hop_decay}")
        if self.walk_index not in WALK_INDEX_USES:
            raise NeoweaveError(f"kg: walk_index must be one of {', '.join(WALK_INDEX_USES)}, "
                                f"got {self.walk_index!r}")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)
        items: list[ContextItem] = []
        with cost.timed("graph"):
            if self.k:
                for row in self._run(trace, "chunk_vector_search", {"k": self.k, "embedding": embedding}):
                    trace.chunk(row["section_id"], row["chunk_id"])
                    items.append(ContextItem.from_row(row, "seed"))
            seeds = self._link(question, embedding, trace)
            facts = self._facts(seeds, embedding, trace, result)
            items += self._fact_chunks(facts, embedding, {item.chunk_id for item in items}, trace)
        if facts:
            with cost.timed("tokens"):  # counting the facts is retrieval work, not question embedding
                counts = self.embedder.count_tokens([fact.text() for fact in facts])
            for fact, count in zip(facts, counts, strict=True):
                fact.token_count = count
        result.facts = facts
        return items

    # 1. entity linking ----------------------------------------------------------------------------
    def _link(self, question: str, embedding: list[float], trace: Trace) -> dict[str, float]:
        """entity id -> link score (see `entity_linking.link_question`)."""
        seeds = link_question(lambda name, params: self._run(trace, name, params), self.store, question,
                              embedding, entity_k=self.entity_k, min_similarity=self.min_entity_similarity,
                              fulltext=self.link_fulltext, strategy=self.name)
        for entity_id in seeds:
            trace.node(entity_id)
        return seeds

    # 2. relations within 1-2 hops -----------------------------------------------------------------
    def _facts(self, seeds: dict[str, float], embedding: list[float], trace: Trace, result: RetrievalResult
               ) -> list[Fact]:
        if not seeds or not self.hops or not self.max_facts:
            return []
        index = walk_index_for(self.store, self.walk_index)
        result.parameters["relations_over"] = "walk index" if index is not None else "store"
        found: dict[frozenset[str], Found] = {}
        frontier, expanded = list(seeds), set(seeds)
        for hop in range(1, self.hops + 1):
            min_score = self._min_raw_score(found, hop)
            if min_score is None:
                break
            reached: dict[str, float] = {}
            for row in self._relations(frontier, embedding, min_score, index, trace):
                score = float(row["score"] or 0.0) * (self.hop_decay ** (hop - 1))
                pair = frozenset((row["entity_id"], row["other_id"]))
                if pair in found and not _better((row, score, hop), found[pair]):
                    continue
                found[pair] = (row, score, hop)
                if row["other_id"] not in expanded:
                    reached[row["other_id"]] = max(reached.get(row["other_id"], -math.inf), score)
            frontier = sorted(reached, key=lambda entity: best_first(reached[entity], entity))[:self.beam]
            expanded.update(frontier)
            if not frontier:
                break
        ranked = sorted(found.values(), key=lambda f: best_first(f[1], *_ends(f[0])))
        kept = self._as_facts(ranked[:self.max_facts], index, trace)
        for fact in kept:
            trace.node(fact.source_id)
            trace.node(fact.target_id)
            trace.relationship(fact.source_id, "RELATED", fact.target_id)
        return kept

    def _relations(self, frontier: list[str], embedding: list[float], min_score: float, index: WalkIndex | None,
                   trace: Trace) -> list[dict[str, Any]]:
        """The frontier's best relations: from the walk index (keys and scores) or the store (whole rows)."""
        if index is not None:
            return relation_candidates(index, frontier, embedding, per_entity=self.per_entity,
                                       weight_factor=self.weight_factor, max_degree=self.max_degree,
                                       min_score=min_score)
        return self._run(trace, "kg_entity_relations", {
            "entity_ids": frontier, "embedding": embedding, "per_entity": self.per_entity,
            "weight_factor": self.weight_factor, "max_chunks": MAX_CHUNKS_PER_FACT,
            "max_degree": self.max_degree, "min_score": min_score})

    def _as_facts(self, kept: list[Found], index: WalkIndex | None, trace: Trace) -> list[Fact]:
        """The kept relations as facts; over the walk index, their texts are read now (one statement)."""
        if index is None or not kept:
            return [Fact.from_relation_row(row, score, hop) for row, score, hop in kept]
        keys = [{"source_id": row["source_id"], "target_id": row["target_id"], "type": row["type"] or ""}
                for row, _, _ in kept]
        details = {(d["source_id"], d["target_id"], d["type"] or ""): d for d in self._run(
            trace, "kg_relation_details", {"rows": keys, "max_chunks": MAX_CHUNKS_PER_FACT})}
        facts = []
        for (row, score, hop), key in zip(kept, keys, strict=True):
            detail = details.get((key["source_id"], key["target_id"], key["type"]))
            if detail is None:  # gone since the index was checked (a concurrent write): not a fact any more
                continue
            names = {detail["source_id"]: detail["source_name"], detail["target_id"]: detail["target_name"]}
            facts.append(Fact.from_relation_row({
                **row, **detail, "entity_name": names[row["entity_id"]], "other_name": names[row["other_id"]]},
                score, hop))
        return facts

    def _min_raw_score(self, found: dict[frozenset[str], Found], hop: int) -> float | None:
        """The undecayed score a relation of `hop` needs to enter the kept facts (None: none can).

        The last hop expands nobody, so a relation scoring below the `max_facts`-th fact found so far can
        never be kept (more facts only raise the bar): the statement leaves it out instead of returning it.
        The facts kept are the same; hop 2 returns fewer rows."""
        if hop < self.hops or len(found) < self.max_facts:
            return EVERY_RELATION
        bar = sorted((score for _, score, _ in found.values()), reverse=True)[self.max_facts - 1]
        decay = self.hop_decay ** (hop - 1)
        if decay == 0:
            return EVERY_RELATION if bar <= 0 else None
        return bar / decay - 1e-9  # ties stay (kept facts break them by id); rounding errs on returning more

    # 3. the facts' source chunks ------------------------------------------------------------------
    def _fact_chunks(self, facts: list[Fact], embedding: list[float], taken: set[str], trace: Trace
                     ) -> list[ContextItem]:
        """The best source chunk (by cosine to the question) of each top fact, until `fact_chunks` are found.

        The chunks of the first facts are read first (a fact's source chunk may be taken or gone, so a few
        facts more than needed); the rest only if those did not yield enough. Reading every fact's chunks
        cost twice the rows for the same answer."""
        if not self.fact_chunks or not facts:
            return []
        with_fresh = [i for i, fact in enumerate(facts) if any(c not in taken for c in fact.chunk_ids)]
        if not with_fresh:
            return []
        cut = with_fresh[min(len(with_fresh), self.fact_chunks + 2) - 1] + 1
        items: list[ContextItem] = []
        for batch in (facts[:cut], facts[cut:]):
            if len(items) >= self.fact_chunks:
                break
            candidates = list(dict.fromkeys(c for fact in batch for c in fact.chunk_ids if c not in taken))
            if not candidates:
                continue
            rows = {row["chunk_id"]: row for row in servable_chunks(self._run(trace, "chunk_contexts", {
                "chunk_ids": candidates, "embedding": embedding}), trace, self.name)}
            for fact in batch:
                options = [rows[c] for c in fact.chunk_ids if c in rows and c not in taken]
                if not options:
                    continue
                best = min(options, key=lambda row: best_first(row["score"], row["chunk_id"]))
                taken.add(best["chunk_id"])
                trace.chunk(best["section_id"], best["chunk_id"])
                trace.relationship(best["chunk_id"], "MENTIONS", fact.source_id)
                items.append(ContextItem.from_row(best, "fact", {"fact": fact.text()[:200], "hop": fact.hop}))
                if len(items) >= self.fact_chunks:
                    break
        return items


def _ends(row: dict[str, Any]) -> tuple[str, str]:
    """A relation row's (source id, target id) in the relation's own direction (facts are ranked by them)."""
    if row["source_id"] == row["entity_id"]:
        return row["entity_id"], row["other_id"]
    return row["other_id"], row["entity_id"]


def _better(new: Found, old: Found) -> bool:
    """Whether `new` replaces `old` for one entity pair: a pair keeps the hop it was first reached at and the best
    score; between equal scores (two edges of one pair: both directions, or several types) the first by key, so
    the fact does not depend on the order rows arrive in."""
    (row, score, hop), (old_row, old_score, old_hop) = new, old
    if hop != old_hop or score != old_score:
        return hop == old_hop and score > old_score
    return (*_ends(row), row["type"] or "") < (*_ends(old_row), old_row["type"] or "")

