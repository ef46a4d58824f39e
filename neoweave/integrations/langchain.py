"""LangChain: any neoweave strategy as a `BaseRetriever`, and any LangChain document loader as an ingest source.

    import neoweave
    from neoweave.integrations.langchain import NeoweaveRetriever, ingest_documents
    kb = neoweave.open(".neoweave")
    ingest_documents(PyPDFLoader("paper.pdf").lazy_load(), kb=kb)
    retriever = NeoweaveRetriever(kb=kb, strategy="larag", parameters={"k": 3})
    docs = retriever.invoke("How does the event loop schedule callbacks?")  # trace in docs[i].metadata

    import_graph_documents(LLMGraphTransformer(llm=...).convert_to_graph_documents(docs), kb=kb)

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

from neoweave.enrich.base import EnrichReport
from neoweave.ingest.pipeline import IngestReport
from neoweave.nlp.extraction import ChunkExtraction


class NeoweaveRetriever(BaseRetriever):
    """A neoweave strategy as a LangChain retriever: one `Document` per context chunk (then facts, community
    reports and key points for the strategies that give them), in the order the strategy ranked them. Each
    document's metadata holds where it came from (chunk, section, document, url), its score, origin and rank,
    and under `neoweave` the retrieval's strategy, parameters, trace (nodes, relationships, statements) and cost."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    kb: Any = Field(description="a neoweave KnowledgeBase (`neoweave.open(...)`)")
    strategy: str = Field("naive", description="a neoweave strategy name")
    parameters: dict[str, Any] = Field(default_factory=dict, description="the strategy's parameters (k, ...)")

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun
                                ) -> list[LCDocument]:
        result = self.kb.retrieve(query, self.strategy, **self.parameters)
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


def ingest_documents(documents: Iterable[LCDocument], *, kb, source: str = "langchain", **options: Any
                     ) -> IngestReport:
    """Ingest the documents of any LangChain loader (`loader.lazy_load()` streams them) into the knowledge base
    `kb`: chunked, embedded and written like a JSONL corpus; incremental (unchanged documents are skipped) and
    crash-safe like any ingest. `options` are `kb.ingest`'s (chunk_size, ...)."""
    return kb.ingest(document_records(documents), source_name=source, **options)


def graph_document_extractions(graph_documents: Iterable[Any], doc_ids: list[str], store
                               ) -> list[ChunkExtraction]:
    """LangChain `GraphDocument`s (nodes, relationships, source document) as per-chunk extractions of the
    documents `doc_ids` (one per graph document, in order). A node is mentioned by each chunk whose text
    names it (case-insensitive; else by the document's first chunk: the graph says it came from this
    document); a relationship is evidence of the first chunk naming both ends (else one end, else the first)."""
    from neoweave.nlp.extraction import Mention, Relation

    chunk_ids = [row["id"] for row in store.run("document_chunk_ids", {"doc_ids": sorted(set(doc_ids))})]
    rows = store.run("chunks_by_ids", {"ids": chunk_ids}) if chunk_ids else []
    chunks_of: dict[str, list[dict[str, Any]]] = {}
    for row in sorted(rows, key=lambda r: (r["doc_id"], r["order"] or 0)):
        chunks_of.setdefault(row["doc_id"], []).append(row)
    extractions: dict[str, ChunkExtraction] = {}
    for graph_document, doc_id in zip(graph_documents, doc_ids, strict=True):
        chunks = chunks_of.get(doc_id, [])
        if not chunks:
            continue
        ids: dict[str, str] = {}  # node id -> entity id
        where: dict[str, list[str]] = {}  # node id -> chunks naming it
        for node in graph_document.nodes:
            name = str(node.id)
            description = str((node.properties or {}).get("description", ""))
            lower = name.lower()
            found = [c for c in chunks if lower in (c["text"] or "").lower()] or chunks[:1]
            for chunk in found:
                extraction = extractions.setdefault(chunk["id"], ChunkExtraction(chunk["id"], "import"))
                mention = Mention.of(name, str(node.type or "concept"), description=description)
                if mention is None:
                    continue
                mention.count = max(1, (chunk["text"] or "").lower().count(lower))
                stored = extraction.add_mention(mention)
                if stored is not None:
                    ids[name] = stored.id
            where[name] = [c["id"] for c in found]
        for rel in graph_document.relationships:
            source, target = str(rel.source.id), str(rel.target.id)
            if source not in ids or target not in ids:
                continue
            both = [c for c in where[source] if c in where[target]]
            chunk_id = (both or where[source] or where[target])[0]
            extraction = extractions.setdefault(chunk_id, ChunkExtraction(chunk_id, "import"))
            description = str((rel.properties or {}).get("description", "")) or rel.type.replace("_", " ").lower()
            extraction.add_relation(Relation(ids[source], ids[target], rel.type.lower(), description))
    return list(extractions.values())


def import_graph_documents(graph_documents: Iterable[Any], *, kb, **kg_parameters: Any
                           ) -> tuple[IngestReport, EnrichReport]:
    """LangChain `GraphDocument`s (e.g. from `LLMGraphTransformer`, as the thesis built its KG) into the graph:
    their source documents ingested as chunks, their nodes as entities mentioned by the chunks that name them,
    their relationships as RELATED evidence of those chunks; then the kg step's resolution, homes and links."""
    from neoweave.enrich.kg_import import import_graph

    graph_documents = list(graph_documents)
    sources = [graph_document.source for graph_document in graph_documents]
    doc_ids = [record["id"] for record in document_records(sources)]
    ingested = ingest_documents(sources, kb=kb)
    extractions = graph_document_extractions(graph_documents, doc_ids, kb.store)
    return ingested, import_graph(kb.store, extractions, embedder=kb.embedder, origin="langchain", **kg_parameters)
