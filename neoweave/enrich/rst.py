"""The `rst` enrich step (KHL-RAG): paragraph features and the rhetorical paragraph graph.

Per batch of chunks (paragraphs):
1. features: main idea (one sentence), keywords, paragraph type with its reason; the main idea and the keywords
   are embedded, each into its own vector index (the retriever's dual-semantic search). fast: the sentence most
   similar to the paragraph, keyphrases ranked by embedding (KeyBERT), cue words; llm: one structured call.
2. relations: candidate pairs (`rst_pairs`: reading-order window + most similar, never all pairs) get their
   rhetorical relations, fast from discourse markers and adjacency (`rst_relations`), llm `pairs_per_call`
   pairs per call. Edges with a confidence above `min_weight` are written, `(earlier)-[:RST]->(later)`.
A paragraph is paired only with paragraphs already processed (the paper's incremental extension), so a new
document's paragraphs link into the existing graph without re-asking old pairs; `forget` removes a chunk's
features and every RST edge it is part of (ingest calls it before deleting or replacing chunks).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from neoweave.enrich import rst_llm
from neoweave.enrich.base import ChunkRow, EnrichReport, EnrichStep, StepContext
from neoweave.enrich.rst_pairs import Pair, PairCounts, Paragraph, candidate_pairs
from neoweave.enrich.rst_relations import fast_paragraph_type, fast_relation
from neoweave.enrich.tags_fast import KeyphraseTagger
from neoweave.errors import NeoweaveError
from neoweave.llm import structured_each
from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.sentences import sentences
from neoweave.registry import register_step
from neoweave.store.base import WriteUnit
from neoweave.store.values import now_iso

log = logging.getLogger(__name__)


@dataclass
class Features:
    main_idea: str
    keywords: list[str]
    paragraph_type: str
    type_reason: str
    method: str
    main_idea_embedding: list[float] | None = None
    keywords_embedding: list[float] | None = None


@dataclass
class Edge:
    source: str
    target: str
    relation: str
    weight: float
    reason: str
    similarity: float
    method: str


@dataclass
class ParagraphResult:
    chunk_id: str
    features: Features
    edges: list[Edge] = field(default_factory=list)
    error: str | None = None


@register_step
@dataclass
class RstStep(EnrichStep):
    name: ClassVar[str] = "rst"
    vector_labels: ClassVar[tuple[str, ...]] = ("Chunk",)
    writes: ClassVar[frozenset[str] | None] = frozenset({
        "RST", "Chunk.main_idea", "Chunk.keywords", "Chunk.paragraph_type", "Chunk.type_reason", "Chunk.rst_method",
        "Chunk.main_idea_embedding", "Chunk.keywords_embedding"})

    window: int = 2
    """Reading-order neighbours paired on each side (within the document)."""
    similar: int = 3
    """Most similar processed paragraphs paired with each new one (the top-m)."""
    cross_document: bool = False
    """Look for the most similar paragraphs in other documents too (one vector query per paragraph)."""
    min_weight: float = 3.0
    """Only relations with a confidence above this (0-10) become edges."""
    title_context: bool = True
    """Embed the main idea and the keywords with the paragraph's section title in front: a sentence taken out of
    its paragraph often lacks its subject ("He was born in ..."), as do keywords."""
    keywords: int = 5
    """fast: keywords per paragraph (keyphrases ranked by similarity to it)."""
    diversity: float = 0.3
    """fast: MMR diversity of the keywords."""
    pairs_per_call: int = 4
    """llm: candidate pairs asked about in one call."""
    text_chars: int = 700
    """llm: characters of a paragraph shown (features call: 3x this)."""
    llm_max_tokens: int = 400
    spacy_batch_size: int = 64
    _done_total: int | None = field(default=None, init=False, repr=False, compare=False)
    _tagger: KeyphraseTagger | None = field(default=None, init=False, repr=False, compare=False)

    def validate(self) -> None:
        super().validate()
        self._at_least(0, "window", "similar", "min_weight", "keywords")
        self._at_least(1, "pairs_per_call", "text_chars")
        if self.min_weight >= 10:
            raise NeoweaveError(f"enrich rst: min_weight must be below 10 (weights are in (0, 10]), "
                                f"got {self.min_weight}")
        if not 0 <= self.diversity <= 1:
            raise NeoweaveError(f"enrich rst: diversity must be in [0, 1], got {self.diversity}")

    @cached_property
    def extractor(self) -> FastExtractor:
        return FastExtractor(noun_phrases=True, code_names=True, batch_size=self.spacy_batch_size)

    def model_name(self, ctx: StepContext) -> str:
        shape = (f"w{self.window}s{self.similar}{'x' if self.cross_document else ''}m{self.min_weight}"
                 f"{'t' if self.title_context else ''}")
        if self.method == "llm":
            if ctx.llm is None:
                raise NeoweaveError("enrich rst --method llm needs an LLM gateway")
            return f"{ctx.llm.model}/p{rst_llm.PROMPT_VERSION}/{shape}"
        return f"{self.extractor.model_name}/{shape}k{self.keywords}"

    def chunk_signature(self, signature: str, extracted: ParagraphResult | None) -> str:
        return f"{signature}+fallback" if extracted is not None and extracted.error else signature

    def close(self) -> None:
        if "extractor" in self.__dict__:
            self.extractor.close()

    # extraction ------------------------------------------------------------------------------------
    def extract(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> list[ParagraphResult]:
        if ctx.embedder is None:
            raise NeoweaveError("enrich rst needs the embedding model (main ideas and keywords are embedded)")
        signature = self.signature(ctx)
        batch_ids = {c.id for c in chunks}
        rows = ctx.store.run("rst_document_chunks", {"doc_ids": sorted({c.doc_id for c in chunks}),
                                                     "signature": signature})
        known = {r["id"]: r for r in rows}
        missing = [c for c in chunks if not (known.get(c.id) or {}).get("embedding")]
        fresh = dict(zip([c.id for c in missing], ctx.embedder.embed([c.text for c in missing]), strict=True))
        new = [Paragraph(c.id, c.doc_id, c.order, c.text,
                         np.asarray(fresh.get(c.id) or known[c.id]["embedding"], dtype=np.float32),
                         title=(known.get(c.id) or {}).get("section_title") or "") for c in chunks]
        done_by_doc: dict[str, list[Paragraph]] = {}
        for r in rows:
            if r["done"] and r["id"] not in batch_ids and r["embedding"]:
                done_by_doc.setdefault(r["doc_id"], []).append(Paragraph(
                    r["id"], r["doc_id"], int(r["order"] or 0), r["text"] or "",
                    np.asarray(r["embedding"], dtype=np.float32), r["main_idea"] or ""))
        features, errors = self._features(new, ctx, report)
        for paragraph, found in zip(new, features, strict=True):
            paragraph.main_idea = found.main_idea
        if self._done_total is None:
            self._done_total = int(ctx.store.run("rst_done_count", {"signature": signature})[0]["count"])
        counts = PairCounts()
        pairs = candidate_pairs(new, done_by_doc, window=self.window, similar=self.similar,
                                other_documents=self._other_documents(new, signature, ctx) if self.cross_document
                                else None, done_in_corpus=self._done_total, counts=counts)
        self._done_total += len(new)
        report.count("pairs_asked", counts.asked)
        report.count("pairs_all_in_documents", counts.all_in_documents)
        report.count("pairs_all_in_corpus", counts.all_in_corpus)
        for why, amount in counts.by_reason.items():
            report.count(f"pairs_{why.replace('+', '_')}", amount)
        edges = self._relations(pairs, ctx, report)
        results = {p.id: ParagraphResult(p.id, f, error=e) for p, f, e in zip(new, features, errors, strict=True)}
        owner = {p.id for p in new}
        for pair, pair_edges in zip(pairs, edges, strict=True):
            # the pair belongs to its paragraph processed last (the one in this batch, the later if both are)
            holder = pair.later.id if pair.later.id in owner else pair.earlier.id
            results[holder].edges.extend(pair_edges)
        return [results[p.id] for p in new]

    def _features(self, paragraphs: list[Paragraph], ctx: StepContext, report: EnrichReport
                  ) -> tuple[list[Features], list[str | None]]:
        errors: list[str | None] = [None] * len(paragraphs)
        features: list[Features | None] = [None] * len(paragraphs)
        if self.method == "llm":
            replies = structured_each(ctx.llm, [rst_llm.features_request(p.text, 3 * self.text_chars)
                                                for p in paragraphs], rst_llm.ParagraphFeatures,
                                      stage="rst:features", max_tokens=self.llm_max_tokens)
            for index, reply in enumerate(replies):
                _count_llm(report, reply.calls)
                if reply.ok:
                    value = reply.value
                    keywords = list(dict.fromkeys(k.strip() for k in value.keywords if k and k.strip()))[:8]
                    features[index] = Features(value.main_idea.strip(), keywords, value.type,
                                               value.reason.strip()[:300], "llm")
                else:
                    errors[index] = reply.error or "no answer"
                    report.failures.append(f"{paragraphs[index].id}: features: {errors[index]}")
        todo = [i for i, f in enumerate(features) if f is None]
        if todo:
            for index, found in zip(todo, self._fast_features([paragraphs[i] for i in todo], ctx), strict=True):
                features[index] = found
        done = [f for f in features if f is not None]
        self._embed(done, [p.title if self.title_context else "" for p in paragraphs], ctx)
        report.count("llm_feature_fallbacks", sum(1 for e in errors if e))
        return done, errors

    def _fast_features(self, paragraphs: list[Paragraph], ctx: StepContext) -> list[Features]:
        """Main idea = the sentence most similar to the paragraph; keywords = keyphrases by embedding (MMR)."""
        split = [sentences(p.text) or [p.text.strip()] for p in paragraphs]
        flat = [s for parts in split for s in parts]
        vectors = np.asarray(ctx.embedder.embed(flat), dtype=np.float32) if flat else np.zeros((0, 1))
        tagger = self._keyphrases(ctx)
        found = tagger.candidates({p.id: p.text for p in paragraphs}) if self.keywords else {}
        ranked = tagger.rank([found[p.id] for p in paragraphs], [p.embedding for p in paragraphs],
                             self.keywords) if self.keywords else [[] for _ in paragraphs]
        results, start = [], 0
        for paragraph, parts, keywords in zip(paragraphs, split, ranked, strict=True):
            own = vectors[start:start + len(parts)]
            start += len(parts)
            best = int(np.argmax(own @ paragraph.embedding)) if len(parts) > 1 else 0
            kind, reason = fast_paragraph_type(paragraph.text)
            found_features = Features(parts[best], [k.name for k in keywords], kind, reason, "fast")
            if not (self.title_context and paragraph.title):  # else embedded with the title in `_embed`
                found_features.main_idea_embedding = own[best].tolist() if len(own) else None
            results.append(found_features)
        return results

    def _keyphrases(self, ctx: StepContext) -> KeyphraseTagger:
        if self._tagger is None or self._tagger.embedder is not ctx.embedder:
            self._tagger = KeyphraseTagger(self.extractor, ctx.embedder, self.diversity)
        return self._tagger

    @staticmethod
    def _embed(features: list[Features], titles: list[str], ctx: StepContext) -> None:
        """Main-idea and keyword embeddings, with the title in front when one is given (a fast main idea without
        one already has its sentence's vector)."""
        ideas = [(f, t) for f, t in zip(features, titles, strict=True) if f.main_idea and f.main_idea_embedding is None]
        keyed = [(f, t) for f, t in zip(features, titles, strict=True) if f.keywords]
        texts = [f"{t}: {f.main_idea}" if t else f.main_idea for f, t in ideas]
        texts += [", ".join([t, *f.keywords] if t else f.keywords) for f, t in keyed]
        vectors = ctx.embedder.embed(texts)
        for (found, _), vector in zip(ideas, vectors[:len(ideas)], strict=True):
            found.main_idea_embedding = vector
        for (found, _), vector in zip(keyed, vectors[len(ideas):], strict=True):
            found.keywords_embedding = vector

    def _other_documents(self, new: list[Paragraph], signature: str, ctx: StepContext
                         ) -> dict[str, list[tuple[Paragraph, float]]]:
        """Cross-document mode: each new paragraph's most similar processed paragraphs (one vector query each)."""
        found: dict[str, list[tuple[Paragraph, float]]] = {}
        for paragraph in new:
            rows = ctx.store.run("rst_similar_chunks", {"k": self.similar + self.window * 2 + 5,
                                                        "embedding": paragraph.embedding.tolist(),
                                                        "signature": signature})
            found[paragraph.id] = [(Paragraph(r["id"], r["doc_id"], int(r["order"] or 0), r["text"] or "",
                                              np.asarray(r["embedding"], dtype=np.float32), r["main_idea"] or ""),
                                    float(r["score"])) for r in rows if r["doc_id"] != paragraph.doc_id]
        return found

    def _relations(self, pairs: list[Pair], ctx: StepContext, report: EnrichReport) -> list[list[Edge]]:
        """Each pair's edges above `min_weight` (llm answers, the fast rules for pairs the model left out)."""
        answered: dict[int, list[tuple[str, float, str]]] = {}
        if self.method == "llm" and pairs:
            groups = [list(range(start, min(start + self.pairs_per_call, len(pairs))))
                      for start in range(0, len(pairs), self.pairs_per_call)]
            requests = [rst_llm.relations_request([(pairs[i].earlier.main_idea, pairs[i].earlier.text,
                                                    pairs[i].later.main_idea, pairs[i].later.text) for i in group],
                                                  self.text_chars) for group in groups]
            replies = structured_each(ctx.llm, requests, rst_llm.PairAnswers, stage="rst:relations",
                                      max_tokens=self.llm_max_tokens)
            for group, reply in zip(groups, replies, strict=True):
                _count_llm(report, reply.calls)
                if not reply.ok:
                    report.failures.append(f"relations of {len(group)} pairs: {reply.error}")
                    continue
                for local, relations in rst_llm.read_relations(reply.value.pairs, len(group)).items():
                    answered[group[local]] = relations
            report.count("llm_pair_fallbacks", len(pairs) - len(answered))
        edges: list[list[Edge]] = []
        for index, pair in enumerate(pairs):
            if index in answered:
                found = [(name, weight, reason, "llm") for name, weight, reason in answered[index]]
            else:
                rule = fast_relation(pair.later.text, pair.distance, pair.similarity)
                found = [(rule.relation, rule.weight, rule.reason, "fast")] if rule else []
            kept = [Edge(pair.earlier.id, pair.later.id, name, weight, reason, round(pair.similarity, 4), method)
                    for name, weight, reason, method in found if weight > self.min_weight]
            report.count("pairs_without_edge" if not kept else "pairs_with_edge")
            edges.append(kept)
        return edges

    # writing ---------------------------------------------------------------------------------------
    def write(self, unit: WriteUnit, extracted: list[ParagraphResult], ctx: StepContext, report: EnrichReport
              ) -> None:
        now, source = now_iso(), f"{self.prefix}{self.version}:{self.method}"
        unit.run("rst_write_features", {"rows": [{
            "id": r.chunk_id, "main_idea": r.features.main_idea, "keywords": r.features.keywords,
            "type": r.features.paragraph_type, "reason": r.features.type_reason, "method": r.features.method,
            "main_idea_embedding": r.features.main_idea_embedding,
            "keywords_embedding": r.features.keywords_embedding} for r in extracted]})
        edges = [e for r in extracted for e in r.edges]
        if edges:
            unit.run("rst_write_relations", {"rows": [{
                "source": e.source, "target": e.target, "relation": e.relation, "weight": e.weight,
                "reason": e.reason, "similarity": e.similarity, "method": e.method} for e in edges],
                "source": source, "now": now})
        report.count("edges", len(edges))
        for edge in edges:
            report.count(f"relation_{edge.relation}")


def _count_llm(report: EnrichReport, calls: list[Any]) -> None:
    for call in calls:
        report.llm_calls += 1
        report.prompt_tokens += call.prompt_tokens
        report.completion_tokens += call.completion_tokens
