"""LangChain: any neoweave strategy as a `BaseRetriever`, and any LangChain document loader as an ingest source.

    from neoweave.integrations.langchain import NeoweaveRetriever, ingest_documents
    ingest_documents(PyPDFLoader("paper.pdf").lazy_load(), store=store, embedder=embedder)
    retriever = NeoweaveRetriever(store=store, embedder=embedder, strategy="larag", parameters={"k": 3})
    docs = retriever.invoke("How does the event loop schedule callbacks?")  # trace in docs[i].metadata

Needs the `langchain` extra (langchain-core; langchain-community for its loaders).
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document as LCDocument
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from neoweave.ingest.pipeline import IngestOptions, Ingestor, IngestReport


class NeoweaveRetriever(BaseRetriever):
    """A neoweave strategy as a LangChain retriever: one `Document` per context chunk (then facts, community
    reports and key points for the strategies that give them), in the order the strategy ranked them. Each
    document's metadata holds where it came from (chunk, section, document, url), its score, origin and rank,
    and under `neoweave` the retrieval's strategy, parameters, trace (nodes, relationships, statements) and cost."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: Any = Field(description="an open neoweave GraphStore")
    embedder: Any = Field(description="the Embedder the graph was built with")
    strategy: str = Field("naive", description="a neoweave strategy name")
    parameters: dict[str, Any] = Field(default_factory=dict, description="the strategy's parameter overrides")
    llm: Any = Field(None, description="the neoweave LLM gateway, for strategies that call a model to retrieve")

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LCDocument]:
        from neoweave.query import strategy

        result = strategy(self.strategy, self.store, self.embedder, self.llm, **self.parameters).retrieve(query)
        retrieval = {"strategy": result.strategy, "parameters": dict(result.parameters),
                     "trace": dataclasses.asdict(result.trace), "context_tokens": result.context_tokens,
                     "cost": {**dataclasses.asdict(result.cost), "total_ms": result.cost.total_ms}}
        documents = []
        for rank, item in enumerate(result.items, 1):
            documents.append(LCDocument(page_content=item.text, id=item.chunk_id, metadata={
                "kind": "chunk", "rank": rank, "chunk_id": item.chunk_id, "section_id": item.section_id,
                "doc_id": item.doc_id, "section_title": item.section_title, "url": item.url, "score": item.score,
                "origin": item.origin, "token_count": item.token_count, "details": item.details,
                "neoweave": retrieval}))
        for rank, fact in enumerate(result.facts, 1):
            documents.append(LCDocument(page_content=fact.text(), metadata={
                "kind": "fact", "rank": rank, "score": fact.score, "hop": fact.hop, "source_id": fact.source_id,
                "target_id": fact.target_id, "chunk_ids": fact.chunk_ids, "neoweave": retrieval}))
        for rank, report in enumerate(result.reports, 1):
            documents.append(LCDocument(page_content=report.text, id=report.community_id, metadata={
                "kind": "community_report", "rank": rank, "score": report.score, "title": report.title,
                "level": report.level, "community_id": report.community_id, "neoweave": retrieval}))
        for rank, point in enumerate(result.points, 1):
            documents.append(LCDocument(page_content=point.text, metadata={
                "kind": "key_point", "rank": rank, "score": point.score, "community_ids": point.community_ids,
                "neoweave": retrieval}))
        return documents


def document_records(documents: Iterable[LCDocument]) -> Iterator[dict[str, Any]]:
    """LangChain documents as neoweave records. The id is stable across runs, so re-ingesting an unchanged
    source skips it: the document's own id, else its `source` (with its `page`), numbered when a source gives
    several documents, else a hash of its text."""
    seen: dict[str, int] = {}
    for document in documents:
        metadata = dict(document.metadata or {})
        source = str(metadata.get("source") or "")
        base = document.id or (f"{source}#page={metadata['page']}" if source and "page" in metadata else source)
        if not base:
            base = "lc-" + hashlib.sha1(document.page_content.encode("utf-8", "replace")).hexdigest()[:16]
        count = seen.get(base, 0)
        seen[base] = count + 1
        doc_id = base if count == 0 else f"{base}#{count}"
        title = metadata.get("title") or (source.rsplit("/", 1)[-1] if source else doc_id)
        url = source if source.startswith(("http://", "https://")) else str(metadata.get("url") or "")
        yield {"id": doc_id, "title": str(title), "text": document.page_content, "url": url,
               "metadata": {key: value for key, value in metadata.items() if key not in ("title", "url")}}


def ingest_documents(documents: Iterable[LCDocument], *, store, embedder, source: str = "langchain",
                     options: IngestOptions | None = None) -> IngestReport:
    """Ingest the documents of any LangChain loader (`loader.lazy_load()` streams them): chunked, embedded and
    written like a JSONL corpus; incremental (unchanged documents are skipped) and crash-safe like any ingest."""
    return Ingestor(store, embedder, options or IngestOptions(progress=False)).ingest_records(
        document_records(documents), source=source)
