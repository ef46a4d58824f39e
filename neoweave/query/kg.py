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

Every step is one set-oriented statement over the whole frontier: 4-6 statements per question.
Needs `neoweave enrich kg`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

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
)
from neoweave.query.entity_linking import link_question


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

    def validate(self) -> None:
        self._at_least(0, "k", "entity_k", "per_entity", "beam", "max_facts", "fact_chunks")
        self._at_least(1, "max_degree")
        if self.hops not in (0, 1, 2):
            raise NeoweaveError(f"kg: hops must be 0, 1 or 2, got {self.hops}")
        if not 0 <= self.hop_decay <= 1:
            raise NeoweaveError(f"kg: hop_decay must be in [0, 1], got {self.hop_decay}")

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
            facts = self._facts(seeds, embedding, trace)
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
    def _facts(self, seeds: dict[str, float], embedding: list[float], trace: Trace) -> list[Fact]:
        if not seeds or not self.hops or not self.max_facts:
            return []
        facts: dict[frozenset[str], Fact] = {}
        frontier, expanded = list(seeds), set(seeds)
        for hop in range(1, self.hops + 1):
            min_score = self._min_raw_score(facts, hop)
            if min_score is None:
                break
            rows = self._run(trace, "kg_entity_relations", {
                "entity_ids": frontier, "embedding": embedding, "per_entity": self.per_entity,
                "weight_factor": self.weight_factor, "max_chunks": MAX_CHUNKS_PER_FACT,
                "max_degree": self.max_degree, "min_score": min_score})
            reached: dict[str, float] = {}
            for row in rows:
                score = float(row["score"] or 0.0) * (self.hop_decay ** (hop - 1))
                pair = frozenset((row["entity_id"], row["other_id"]))
                if pair in facts and (facts[pair].hop < hop or facts[pair].score >= score):
                    continue  # a relation keeps the hop (and score) it was first reached at
                facts[pair] = Fact.from_relation_row(row, score, hop)
                if row["other_id"] not in expanded:
                    reached[row["other_id"]] = max(reached.get(row["other_id"], -math.inf), score)
            frontier = sorted(reached, key=lambda entity: -reached[entity])[:self.beam]
            expanded.update(frontier)
            if not frontier:
                break
        ranked = sorted(facts.values(), key=lambda fact: (-fact.score, fact.source_id, fact.target_id))
        kept = ranked[:self.max_facts]
        for fact in kept:
            trace.node(fact.source_id)
            trace.node(fact.target_id)
            trace.relationship(fact.source_id, "RELATED", fact.target_id)
        return kept

    def _min_raw_score(self, facts: dict[frozenset[str], Fact], hop: int) -> float | None:
        """The undecayed score a relation of `hop` needs to enter the kept facts (None: none can).

        The last hop expands nobody, so a relation scoring below the `max_facts`-th fact found so far can
        never be kept (more facts only raise the bar): the statement leaves it out instead of returning it.
        The facts kept are the same; hop 2 returns fewer rows."""
        if hop < self.hops or len(facts) < self.max_facts:
            return EVERY_RELATION
        bar = sorted((fact.score for fact in facts.values()), reverse=True)[self.max_facts - 1]
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
            rows = {row["chunk_id"]: row for row in self._run(trace, "chunk_contexts", {
                "chunk_ids": candidates, "embedding": embedding})}
            for fact in batch:
                options = [rows[c] for c in fact.chunk_ids if c in rows and c not in taken]
                if not options:
                    continue
                best = max(options, key=lambda row: float(row["score"]))
                taken.add(best["chunk_id"])
                trace.chunk(best["section_id"], best["chunk_id"])
                trace.relationship(best["chunk_id"], "MENTIONS", fact.source_id)
                items.append(ContextItem.from_row(best, "fact", {"fact": fact.text()[:200], "hop": fact.hop}))
                if len(items) >= self.fact_chunks:
                    break
        return items
