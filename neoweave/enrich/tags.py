"""The `tags` enrich step (Orion-RAG): master tags per document, paragraph tags per chunk, tag paths.

Per batch of chunks: the master tags of documents not seen yet in this run (from the title and leading chunks),
the paragraph tags of each chunk (fast: keyphrases ranked by embedding; llm: the paper's two tagging agents),
then every chunk's path P = master tags + paragraph tags and its embedding (the tag index). User edits already
in the graph are kept and shape the path: a tag a user added leads its layer, a tag a user removed stays out
even when a machine method proposes it again. Everything of one batch is written in one unit.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from neoweave.enrich import tags_llm
from neoweave.enrich.base import ChunkRow, EnrichReport, EnrichStep, StepContext
from neoweave.enrich.tag_paths import ordered, path_text
from neoweave.enrich.tags_fast import KeyphraseTagger, Scored, unit
from neoweave.errors import NeoweaveError
from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.keyphrases import normalize_tag
from neoweave.registry import register_step
from neoweave.store.base import WriteUnit
from neoweave.store.provenance import forget_unused
from neoweave.store.values import now_iso

log = logging.getLogger(__name__)


@dataclass
class ChunkTags:
    chunk_id: str
    doc_id: str
    tags: list[Scored]
    path: str = ""
    embedding: list[float] | None = None
    error: str | None = None


@register_step
@dataclass
class TagsStep(EnrichStep):
    name: ClassVar[str] = "tags"
    vector_labels: ClassVar[tuple[str, ...]] = ("Chunk",)
    writes: ClassVar[frozenset[str] | None] = frozenset({"Tag", "TAGGED", "Chunk.tag_path", "Chunk.tag_path_embedding"})

    master_tags: int = 5
    """Master tags per document (the paper leaves its {max_tags} open)."""
    paragraph_tags: int = 3
    """Paragraph tags per chunk (the paper's three: gist, subjects, domain)."""
    title_tag: bool = True
    """fast: the document's title is its first master tag (on titled corpora the strongest theme there is)."""
    master_chunks: int = 8
    """Leading chunks of a document its master tags are chosen from."""
    diversity: float = 0.3
    """fast: MMR diversity (0 = most similar phrases, 1 = most different ones)."""
    spacy_batch_size: int = 64
    llm_max_tokens: int = 96
    """llm: completion cap per tagging call."""
    _masters: dict[str, list[Scored]] = field(default_factory=dict, init=False, repr=False, compare=False)
    _written_docs: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    _fast_masters: set[str] = field(default_factory=set, init=False, repr=False, compare=False)
    """Documents whose master tags came from the fast method because the model gave no usable answer."""
    _tagger: KeyphraseTagger | None = field(default=None, init=False, repr=False, compare=False)

    def validate(self) -> None:
        super().validate()
        self._at_least(1, "master_tags", "paragraph_tags", "master_chunks")
        if not 0 <= self.diversity <= 1:
            raise NeoweaveError(f"enrich tags: diversity must be in [0, 1], got {self.diversity}")

    @cached_property
    def extractor(self) -> FastExtractor:
        return FastExtractor(noun_phrases=True, code_names=True, batch_size=self.spacy_batch_size)

    def tagger(self, ctx: StepContext) -> KeyphraseTagger:
        if ctx.embedder is None:
            raise NeoweaveError("enrich tags needs the embedding model")
        if self._tagger is None or self._tagger.embedder is not ctx.embedder:
            self._tagger = KeyphraseTagger(self.extractor, ctx.embedder, self.diversity)
        return self._tagger

    def model_name(self, ctx: StepContext) -> str:
        shape = f"m{self.master_tags}p{self.paragraph_tags}"
        if self.method == "llm":
            if ctx.llm is None:
                raise NeoweaveError("enrich tags --method llm needs an LLM gateway")
            return f"{ctx.llm.model}/p{tags_llm.PROMPT_VERSION}/{shape}"
        return f"{self.extractor.model_name}/{shape}{'t' if self.title_tag else ''}d{self.diversity}"

    def chunk_signature(self, signature: str, extracted: ChunkTags | None) -> str:
        return f"{signature}+fallback" if extracted is not None and extracted.error else signature

    def close(self) -> None:
        if "extractor" in self.__dict__:
            self.extractor.close()

    # extraction ------------------------------------------------------------------------------------
    def extract(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> list[ChunkTags]:
        if ctx.embedder is None:
            raise NeoweaveError("enrich tags needs the embedding model (tag paths are embedded)")
        self._tag_documents(sorted({c.doc_id for c in chunks} - set(self._masters)), ctx, report)
        results = self._tag_chunks(chunks, ctx, report)
        self._paths(results, ctx)
        return results

    def _tag_documents(self, doc_ids: list[str], ctx: StepContext, report: EnrichReport) -> None:
        if not doc_ids:
            return
        rows = ctx.store.run("tag_documents", {"doc_ids": doc_ids, "chunks": self.master_chunks})
        fast_rows = rows
        if self.method == "llm":
            answers = tags_llm.ask(ctx.llm, tags_llm.master_requests(
                [(r["title"] or "", "\n\n".join(r["texts"])) for r in rows], self.master_tags),
                "tags:master", self.llm_max_tokens)
            fast_rows = []
            for row, answer in zip(rows, answers, strict=True):
                self._count_llm(report, answer)
                tags = _llm_tags(answer.value.tags if answer.ok else [], self.master_tags)
                if tags:
                    self._masters[row["doc_id"]] = tags
                else:
                    report.failures.append(f"document {row['doc_id']}: {answer.error or 'no tags'}")
                    fast_rows.append(row)
                    self._fast_masters.add(row["doc_id"])
        if fast_rows:
            tagger = self.tagger(ctx)
            found = tagger.candidates({i: t for r in fast_rows for i, t in zip(r["ids"], r["texts"], strict=True)})
            per_doc = [[p for chunk_id in r["ids"] for p in found[chunk_id]] for r in fast_rows]
            targets = [unit([e for e in r["embeddings"] if e]) for r in fast_rows]
            lead = [r["title"] if self.title_tag else None for r in fast_rows]
            for row, tags in zip(fast_rows, tagger.rank(per_doc, targets, self.master_tags, lead=lead), strict=True):
                self._masters[row["doc_id"]] = tags
        for doc_id in doc_ids:
            self._masters.setdefault(doc_id, [])

    def _tag_chunks(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> list[ChunkTags]:
        results = [ChunkTags(c.id, c.doc_id, []) for c in chunks]
        todo = list(range(len(chunks)))
        if self.method == "llm":
            masters = [_master_path(self._masters.get(c.doc_id, [])) for c in chunks]
            answers = tags_llm.ask(ctx.llm, tags_llm.paragraph_requests(
                [(m, c.text) for m, c in zip(masters, chunks, strict=True)]), "tags:paragraph", self.llm_max_tokens)
            todo = []
            for index, answer in enumerate(answers):
                self._count_llm(report, answer)
                results[index].tags = _llm_tags(answer.value.tags if answer.ok else [], self.paragraph_tags)
                if not results[index].tags:
                    results[index].error = answer.error or "no tags"
                    report.failures.append(f"{chunks[index].id}: {results[index].error}")
                    todo.append(index)
        if todo:
            embeddings = {r["id"]: r["embedding"] for r in ctx.store.run(
                "chunk_embeddings", {"ids": [chunks[i].id for i in todo]})}
            targets = [np.asarray(embeddings.get(chunks[i].id) or ctx.embedder.embed_query(chunks[i].text),
                                  dtype=np.float32) for i in todo]
            tagger = self.tagger(ctx)
            found = tagger.candidates({chunks[i].id: chunks[i].text for i in todo})
            tagged = tagger.rank([found[chunks[i].id] for i in todo], targets, self.paragraph_tags)
            for index, tags in zip(todo, tagged, strict=True):
                results[index].tags = tags
        return results

    def _paths(self, results: list[ChunkTags], ctx: StepContext) -> None:
        """Each chunk's path from the new machine tags and the user edits already in the graph."""
        ids = [r.chunk_id for r in results]
        current = {r["chunk_id"]: r for r in ctx.store.run("tag_path_inputs", {"chunk_ids": ids})}
        for result in results:
            row = current.get(result.chunk_id, {"master": [], "own": []})
            master = _layer(row["master"], self._masters.get(result.doc_id, []))
            own = _layer(row["own"], result.tags)
            result.path = path_text(master, own)
        tagged = [r for r in results if r.path]
        for result, vector in zip(tagged, ctx.embedder.embed([r.path for r in tagged]) if tagged else [],
                                  strict=True):
            result.embedding = vector

    @staticmethod
    def _count_llm(report: EnrichReport, answer: Any) -> None:
        for call in answer.calls:
            report.llm_calls += 1
            report.prompt_tokens += call.prompt_tokens
            report.completion_tokens += call.completion_tokens

    # writing ---------------------------------------------------------------------------------------
    def write(self, unit: WriteUnit, extracted: list[ChunkTags], ctx: StepContext, report: EnrichReport) -> None:
        now, source = now_iso(), f"{self.prefix}{self.version}:{self.method}"
        docs = sorted({r.doc_id for r in extracted} - self._written_docs)
        if docs:
            unit.run("tags_forget_documents", {"doc_ids": docs})
            unit.run("tags_write_documents", {"rows": [
                {"id": d, "method": "fast" if d in self._fast_masters else self.method,
                 "tags": _rows(self._masters.get(d, []))} for d in docs], "source": source, "now": now})
            self._written_docs.update(docs)
            report.count("documents", len(docs))
            forget_unused(unit)  # master tags the documents no longer carry
        unit.run("tags_write_chunks", {"rows": [{"id": r.chunk_id, "method": "fast" if r.error else self.method,
                                                 "tags": _rows(r.tags)} for r in extracted],
                                       "source": source, "now": now})
        unit.run("set_chunk_tag_paths", {"rows": [{"id": r.chunk_id, "path": r.path or None,
                                                   "embedding": r.embedding} for r in extracted]})
        report.count("paragraph_tags", sum(len(r.tags) for r in extracted))
        report.count("llm_fallbacks", sum(1 for r in extracted if r.error))


def _master_path(tags: list[Scored]) -> str:
    return path_text([t.name for t in tags], [])


def _rows(tags: list[Scored]) -> list[dict[str, Any]]:
    return [{"name": t.name, "rank": rank, "weight": t.weight} for rank, t in enumerate(tags)]


def _layer(graph_rows: list[dict[str, Any]], machine: list[Scored]) -> list[str]:
    """One layer of a path: the graph's user edits (added and removed) with the new machine tags."""
    user = [r for r in graph_rows if r.get("method") == "user"]
    fresh = [{"name": t.name, "rank": rank, "method": "machine"} for rank, t in enumerate(machine)]
    return ordered([*user, *fresh])


def _llm_tags(tags: list[str], limit: int) -> list[Scored]:
    """The model's tags normalised, each once, in its order, weighted by rank (1, then less)."""
    names = list(dict.fromkeys(n for n in (normalize_tag(t) for t in tags if isinstance(t, str))
                               if n and n not in tags_llm.FIELD_NAMES))[:limit]
    return [Scored(name, round(1 - rank / (2 * max(len(names), 1)), 4)) for rank, name in enumerate(names)]
