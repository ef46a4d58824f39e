"""Orion-RAG (Chen et al. 2026): tag paths, tag + dense + BM25 lists fused by weighted RRF, query expansion,
pruning, and the context grouped under its sub-queries.

1. Expansion: the LLM splits the question into at most `max_sub_queries` short queries; the question is kept.
2. Per sub-query, coarse candidates = tag index top `tag_factor`*k (chunks whose tag path, the document's master
   tags and the chunk's paragraph tags, is nearest) and BM25 top ceil(`sparse_fraction`*k); every candidate is
   ranked by tag-path similarity, by its text's dense similarity and by BM25; S = sum_j w_j / (c + rank_j)
   (weights 0.25 / 0.25 / 0.5, c = 60 in the paper); the best k per sub-query are kept.
3. Pruning: the LLM removes the sentences of each kept chunk irrelevant to its sub-query (it sees the tag path):
   by default it answers the numbers of the sentences to keep (`prune_mode=sentences`, neoweave's cheaper and
   exact variant), or writes the kept text as in the paper (`text`); the trace keeps what was removed, and a
   chunk pruned to nothing leaves the context.
Each stage can be switched off (`expand`, `prune`, `indexes`) for the paper's ablations. Statements:
`chunk_tag_path_search`, `chunk_term_postings`, `chunk_bm25`, `chunk_similarities` (optionally
`chunk_vector_search`), a few per sub-query.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.llm.gateway import estimate_tokens, structured_each
from neoweave.query import orion_agents as agents
from neoweave.query import sparse
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register, servable_chunks
from neoweave.query.fusion import weighted_rrf
from neoweave.query.ranking import best_first

log = logging.getLogger(__name__)
LISTS = ("tag", "semantic", "sparse")


@register
@dataclass
class OrionRAG(Strategy):
    name = "orion"
    requires = ("tags",)
    needs_llm: ClassVar[bool] = True
    llm_free: ClassVar[dict[str, Any]] = {"expand": False, "prune": False}
    paper: ClassVar[dict[str, Any] | None] = {
        "k": 5, "expand": True, "prune": True, "prune_mode": "text", "indexes": LISTS, "tag_factor": 3,
        "sparse_fraction": 0.4, "dense_candidates": 0, "rrf_c": 60.0}
    paper_source: ClassVar[str] = "Orion-RAG, 002 l. 94-133 (online phase), 458-462 (the pruning prompt)"

    k: int = 5
    """Chunks kept per sub-query (the paper's 5)."""
    expand: bool = True
    """Rewrite the question into sub-queries (the original is always one of them)."""
    max_sub_queries: int = 3
    """At most this many sub-queries besides the question (the paper leaves its n open)."""
    prune: bool = True
    """Let the LLM remove the sentences of each chunk irrelevant to its sub-query."""
    prune_mode: str = "sentences"
    """sentences: the model answers the numbers of the sentences to keep (a few tokens; the kept text is the
    chunk's own); text: the paper's way, the model writes the kept text out (~15 s per chunk on the local
    1.5B, and a small model may rephrase)."""
    indexes: tuple[str, ...] = LISTS
    """Ranked lists fused: tag (tag-path similarity), semantic (text similarity), sparse (BM25)."""
    tag_factor: int = 3
    """Coarse candidates from the tag index: tag_factor * k (the paper's 3k)."""
    sparse_fraction: float = 0.4
    """Coarse candidates from BM25: ceil(sparse_fraction * k) (the paper's 2k/5)."""
    dense_candidates: int = 0
    """Coarse candidates from the dense text index too (an option the paper does not use; 0 = off)."""
    tag_weight: float = 0.25
    semantic_weight: float = 0.25
    sparse_weight: float = 0.5
    rrf_c: float = 60.0
    """RRF constant c (60 in the paper and the RRF paper)."""
    per_term: int = 20
    """BM25: chunks the full-text index gives per query term."""
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    rewrite_max_tokens: int = 160
    prune_max_tokens: int = 384
    """Completion cap of a pruning call (text mode writes the kept text out)."""

    def validate(self) -> None:
        self._at_least(1, "k", "tag_factor", "per_term")
        self._at_least(0, "max_sub_queries", "sparse_fraction", "dense_candidates", "tag_weight",
                       "semantic_weight", "sparse_weight", "rrf_c", "bm25_k1", "bm25_b")
        if self.prune_mode not in ("sentences", "text"):
            raise NeoweaveError(f"orion: prune_mode must be sentences or text, got {self.prune_mode!r}")
        unknown = [name for name in self.indexes if name not in LISTS]
        if unknown or not self.indexes:
            raise NeoweaveError(f"orion: indexes must be some of {', '.join(LISTS)}, got {list(self.indexes)}")
        if (self.expand or self.prune) and self.llm is None:
            raise NeoweaveError("orion: expand and prune need an LLM",
                                hint="configure [llm], or pass -P orion.expand=false -P orion.prune=false")

    @classmethod
    def wants_llm(cls, overrides: dict[str, Any] | None = None) -> bool:
        """Only expansion and pruning call the LLM (`-P orion.expand=false -P orion.prune=false` needs none)."""
        settings = {"expand": cls.expand, "prune": cls.prune, **(overrides or {})}
        return bool(settings["expand"] or settings["prune"])

    @property
    def sparse_k(self) -> int:
        return math.ceil(self.sparse_fraction * self.k) if "sparse" in self.indexes else 0

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        queries = self._sub_queries(question, cost) if self.expand and self.max_sub_queries else [question]
        with cost.timed("embed"):
            vectors = self.embedder.embed(queries)
        groups = [self._fuse(query, vector, trace, cost) for query, vector in zip(queries, vectors, strict=True)]
        if self.prune:
            groups = self._prune(question, queries, groups, cost)
        items: dict[str, ContextItem] = {}
        for index, (query, group) in enumerate(zip(queries, groups, strict=True)):
            for item in group:
                if item.chunk_id in items:
                    items[item.chunk_id].details["sub_queries"].append(index)
                    continue
                item.details.update(sub_query=query, sub_query_index=index, sub_queries=[index])
                items[item.chunk_id] = item
                trace.chunk(item.section_id, item.chunk_id)
        result.parameters["sub_queries"] = queries
        return list(items.values())

    # stages -----------------------------------------------------------------------------------------
    def _sub_queries(self, question: str, cost: Cost) -> list[str]:
        with cost.timed("rewrite"):
            reply = self.llm.structured(agents.rewrite_messages(question, self.max_sub_queries), agents.SubQueries,
                                        stage=agents.REWRITE_STAGE, max_tokens=self.rewrite_max_tokens)
        cost.count_calls(reply.calls, reply.ok)
        if not reply.ok:
            log.warning("orion: query expansion failed (%s); the question alone is searched", reply.error)
            return [question]
        return agents.sub_queries(question, reply.value.queries, self.max_sub_queries)

    def _fuse(self, query: str, vector: list[float], trace: Trace, cost: Cost) -> list[ContextItem]:
        """Coarse candidates of one sub-query, ranked three ways and fused; the best k."""
        def run(name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
            return self._run(trace, name, params)

        tag_ids: list[str] = []
        with cost.timed("tag"):
            if "tag" in self.indexes:
                tag_ids = [r["chunk_id"] for r in run("chunk_tag_path_search",
                                                      {"k": self.tag_factor * self.k, "embedding": vector})]
                if not tag_ids:  # an empty tag index would silently leave only the BM25 few
                    raise NeoweaveError("orion: no chunk has a tag path (the tag index is empty)",
                                        hint="run `neoweave enrich tags`, or fuse without the tag list: "
                                             "-P orion.indexes=semantic,sparse")
        with cost.timed("sparse"):
            found = sparse.postings(run, query, self.per_term) if "sparse" in self.indexes else sparse.Postings([])
        dense_ids: list[str] = []
        with cost.timed("graph"):
            dense_k = self.dense_candidates or (0 if tag_ids or (self.sparse_k and found.candidates)
                                                else self.tag_factor * self.k)
            if dense_k:
                dense_ids = [r["chunk_id"] for r in run("chunk_vector_search", {"k": dense_k, "embedding": vector})]
        with cost.timed("sparse"):
            # one BM25 pass over everything it may rank: the index's candidates (the sparse coarse list is their
            # best sparse_k) and the other lists' candidates (their BM25 rank in the fusion)
            pool = list(dict.fromkeys([*tag_ids, *found.candidates, *dense_ids]))
            scored = sparse.bm25(run, self.store, found, len(pool), ids=pool, k1=self.bm25_k1, b=self.bm25_b)
            score = {r["chunk_id"]: r["score"] for r in scored}
            listed = {chunk_id: order for order, chunk_id in enumerate(found.candidates)}
            sparse_ids = sorted((c for c in score if c in listed), key=lambda c: best_first(score[c], c))
            sparse_ids = sparse_ids[:self.sparse_k]
        candidates = list(dict.fromkeys([*tag_ids, *sparse_ids, *dense_ids]))
        with cost.timed("graph"):
            rows = {r["chunk_id"]: r for r in servable_chunks(
                run("chunk_similarities", {"ids": candidates, "embedding": vector}), trace, self.name, "semantic")}
        bm25 = {c: score[c] for c in sorted((c for c in score if c in rows), key=lambda c: best_first(score[c], c))}
        lists = {
            "tag": sorted((c for c in rows if rows[c]["tag"] is not None),
                          key=lambda c: best_first(rows[c]["tag"], c)),
            "semantic": sorted(rows, key=lambda c: best_first(rows[c]["semantic"], c)),
            "sparse": list(bm25),
        }
        weights = {"tag": self.tag_weight, "semantic": self.semantic_weight, "sparse": self.sparse_weight}
        lists = {name: ids for name, ids in lists.items() if name in self.indexes}
        ranks = {name: {c: rank for rank, c in enumerate(ids, 1)} for name, ids in lists.items()}
        items = []
        for chunk_id, score in weighted_rrf(lists, weights, c=self.rrf_c)[:self.k]:
            row = rows[chunk_id]
            items.append(ContextItem.from_row({**row, "score": score}, "fused", {
                "tag_path": row["tag_path"] or "", "ranks": {name: ranks[name].get(chunk_id) for name in ranks},
                "tag_similarity": row["tag"], "semantic_similarity": row["semantic"], "bm25": bm25.get(chunk_id)}))
        return items

    def _prune(self, question: str, queries: list[str], groups: list[list[ContextItem]], cost: Cost
               ) -> list[list[ContextItem]]:
        pairs = [(query, item) for query, group in zip(queries, groups, strict=True) for item in group]
        with cost.timed("prune"):
            kept = self._prune_sentences(question, pairs, cost) if self.prune_mode == "sentences" else \
                self._prune_text(question, pairs, cost)
        dropped: set[int] = set()
        for index, ((_, item), text) in enumerate(zip(pairs, kept, strict=True)):
            if text is None:  # the call failed: the chunk stays as it is
                continue
            item.details["pruned"] = {"original_tokens": item.token_count,
                                      "removed": agents.removed_sentences(item.text, text)}
            if not text:
                dropped.add(index)
                continue
            item.text, item.token_count = text, estimate_tokens(text)
        kept_pairs = [pair for index, pair in enumerate(pairs) if index not in dropped]
        return [[item for query2, item in kept_pairs if query2 == query] for query in queries]

    def _prune_sentences(self, question: str, pairs: list[tuple[str, ContextItem]], cost: Cost
                         ) -> list[str | None]:
        parts = [agents.sentences(item.text) for _, item in pairs]
        replies = structured_each(self.llm, [agents.prune_sentence_messages(question, query, item.details["tag_path"],
                                                                            sentences)
                                             for (query, item), sentences in zip(pairs, parts, strict=True)],
                                  agents.KeptSentences, stage=agents.PRUNE_STAGE, max_tokens=self.prune_max_tokens)
        kept: list[str | None] = []
        for sentences, reply in zip(parts, replies, strict=True):
            cost.count_calls(reply.calls, reply.ok)
            kept.append(agents.kept_text(sentences, reply.value.keep) if reply.ok else None)
        return kept

    def _prune_text(self, question: str, pairs: list[tuple[str, ContextItem]], cost: Cost) -> list[str | None]:
        replies = agents.prune_all(self.llm, [agents.prune_messages(question, query, item.details["tag_path"],
                                                                    item.text) for query, item in pairs],
                                   self.prune_max_tokens)
        for reply in replies:
            cost.count_calls([reply.call] if reply is not None else [], reply is not None)
        return [reply.text.strip() if reply is not None else None for reply in replies]
