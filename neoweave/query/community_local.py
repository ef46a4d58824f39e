"""Community local search (microsoft/graphrag's local search; the thesis's Community-Graph RAG, local side).

1. Link the question to entities (names in it, full-text, nearest entity vectors; as the kg retriever).
2. Gather, each in one statement: the reported communities holding those entities (leaf and ancestors up to
   `max_level`), their relations (scored by the other end's similarity to the question plus weight), the
   chunks mentioning them (more of the entities first), and the top-k vector chunks.
3. Rank each kind and give it its share of `max_context_tokens` (graphrag's proportions: half for text,
   a quarter for community reports, the rest for relations); a share left unused goes to the next kind.

No LLM at retrieval; needs `neoweave enrich kg` and `neoweave enrich communities`. A report older than a change to
its members (a deletion, a sync, a merge or unmerge) or citing a deleted chunk is withdrawn, noted in the trace,
until `neoweave enrich communities` rewrites it: stale text is never served.
"""

from __future__ import annotations

from dataclasses import dataclass

from neoweave.errors import NeoweaveError
from neoweave.query.base import (
    EVERY_RELATION,
    MAX_CHUNKS_PER_FACT,
    ContextItem,
    Cost,
    Fact,
    ReportItem,
    RetrievalResult,
    Strategy,
    Trace,
    register,
    servable_chunks,
)
from neoweave.query.entity_linking import link_question
from neoweave.query.ranking import best_first


@register
@dataclass
class CommunityLocalRetriever(Strategy):
    name = "community_local"
    requires = ("kg", "communities")

    k: int = 5
    """Chunks from vector search, ranked with the entities' chunks."""
    entity_k: int = 10
    """Entities linked by embedding similarity (graphrag's top_k_mapped_entities), besides names in the question."""
    min_entity_similarity: float = 0.5
    """Embedding-linked entities below this cosine to the question are not used."""
    max_level: int = 2
    """Deepest community level whose reports are used (graphrag's community_level)."""
    max_context_tokens: int = 2000
    """Context budget shared by chunks, community reports and relations."""
    text_unit_prop: float = 0.5
    """Share of the budget for chunks (graphrag's default)."""
    community_prop: float = 0.25
    """Share of the budget for community reports (graphrag's default); the rest is for relations."""
    per_entity: int = 10
    """Relations considered per linked entity."""
    weight_factor: float = 0.05
    """Relation rank: cosine(question, other end) + weight_factor * ln(1 + weight) (as the kg retriever)."""
    max_degree: int = 500
    """Linked entities with more relations (hubs) give no relations of their own (as the kg retriever)."""
    entity_chunks: int = 20
    """Chunks mentioning the entities fetched before packing."""
    hit_bonus: float = 0.1
    """Chunk rank: cosine to the question + hit_bonus per question entity the chunk mentions."""

    def validate(self) -> None:
        self._at_least(0, "k", "entity_k", "max_level", "per_entity", "entity_chunks")
        self._at_least(1, "max_degree")
        self._at_least(1, "max_context_tokens")
        if not (0 <= self.text_unit_prop <= 1 and 0 <= self.community_prop <= 1
                and self.text_unit_prop + self.community_prop <= 1):
            raise NeoweaveError("community_local: text_unit_prop and community_prop must be in [0, 1] and sum to "
                                f"at most 1, got {self.text_unit_prop} and {self.community_prop}")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)
        with cost.timed("graph"):
            entities = link_question(lambda name, params: self._run(trace, name, params), self.store, question,
                                     embedding, entity_k=self.entity_k, min_similarity=self.min_entity_similarity,
                                     strategy=self.name)
            ids = sorted(entities, key=lambda e: (-entities[e], e))
            for entity_id in ids:
                trace.node(entity_id)
            seeds = self._run(trace, "chunk_vector_search", {"k": self.k, "embedding": embedding}) if self.k else []
            if ids:
                mentioned = self._run(trace, "local_entity_chunks", {"entity_ids": ids, "embedding": embedding,
                                                                      "limit": self.entity_chunks})
                communities = self._run(trace, "local_entity_communities", {"entity_ids": ids,
                                                                             "max_level": self.max_level})
                relations = self._run(trace, "kg_entity_relations", {
                    "entity_ids": ids, "embedding": embedding, "per_entity": self.per_entity,
                    "weight_factor": self.weight_factor, "max_chunks": MAX_CHUNKS_PER_FACT,
                    "max_degree": self.max_degree, "min_score": EVERY_RELATION}) if self.per_entity else []
            else:
                mentioned, communities, relations = [], [], []
        chunks = self._rank_chunks(seeds, servable_chunks(mentioned, trace, self.name))
        trace.skip_reports(self.name, sorted(r["id"] for r in communities if r["withdrawn"]))  # stale: not served
        communities = [r for r in communities if not r["withdrawn"]]
        reports = [ReportItem(r["id"], int(r["level"]), r["title"] or r["id"], r["full_report"] or "",
                              float(r["rating"] or 0.0), float(len(r["entity_ids"] or [])),
                              list(r["entity_ids"] or []), int(r["token_count"] or 0))
                   for r in sorted(communities, key=lambda r: (-len(r["entity_ids"] or []), -int(r["level"]),
                                                               -float(r["rating"] or 0.0), r["id"]))]
        facts = self._facts(relations)
        # reports carry the count made when they were written; facts (and reports written without one) are counted
        uncounted = [*(r for r in reports if not r.token_count), *facts]
        with cost.timed("tokens"):
            counts = self.embedder.count_tokens([item.text if isinstance(item, ReportItem) else item.text()
                                                 for item in uncounted])
        for item, count in zip(uncounted, counts, strict=True):
            item.token_count = count
        budget = self.max_context_tokens
        chunk_share = int(budget * self.text_unit_prop)
        items, used = _pack(chunks, chunk_share)
        report_share = int(budget * self.community_prop) + (chunk_share - used)
        result.reports, used_reports = _pack(reports, report_share)
        result.facts, _ = _pack(facts, budget - used - used_reports)
        for item in items:
            trace.chunk(item.section_id, item.chunk_id)
            for entity_id in item.details.get("entities", []):
                trace.relationship(item.chunk_id, "MENTIONS", entity_id)
        for report in result.reports:
            trace.node(report.community_id)
            for entity_id in report.entity_ids:
                trace.relationship(entity_id, "IN_COMMUNITY", report.community_id)
        for fact in result.facts:
            trace.node(fact.source_id)
            trace.node(fact.target_id)
            trace.relationship(fact.source_id, "RELATED", fact.target_id)
        return items

    def _rank_chunks(self, seeds: list[dict], mentioned: list[dict]) -> list[ContextItem]:
        ranked: dict[str, ContextItem] = {}
        for row in seeds:
            ranked[row["chunk_id"]] = ContextItem.from_row(row, "seed")
        for row in mentioned:
            found = list(row["entity_ids"] or [])
            score = float(row["score"] or 0.0) + self.hit_bonus * len(found)
            item = ranked.get(row["chunk_id"])
            if item is None:
                item = ranked[row["chunk_id"]] = ContextItem.from_row(row, "entity")
            item.score = max(item.score, score)
            item.details["entities"] = found
        return sorted(ranked.values(), key=lambda item: best_first(item.score, item.chunk_id))

    @staticmethod
    def _facts(rows: list[dict]) -> list[Fact]:
        facts: dict[frozenset[str], Fact] = {}
        for row in rows:
            pair = frozenset((row["entity_id"], row["other_id"]))
            score = float(row["score"] or 0.0)
            if pair in facts and facts[pair].score >= score:
                continue
            facts[pair] = Fact.from_relation_row(row, score, 1)
        return sorted(facts.values(), key=lambda f: best_first(f.score, f.source_id, f.relation, f.target_id))


def _pack(ranked: list, budget: int) -> tuple[list, int]:
    """The ranked items that fit in `budget` tokens, in rank order (an item too large is skipped, not an end)."""
    kept, used = [], 0
    for item in ranked:
        if used + item.token_count <= budget:
            kept.append(item)
            used += item.token_count
    return kept, used
