"""LlamaIndex: any neoweave strategy as a `BaseRetriever` (llama-index-core), for query engines and agents.

    import neoweave
    from neoweave.integrations.llamaindex import NeoweaveLlamaIndexRetriever
    kb = neoweave.open(".neoweave")
    retriever = NeoweaveLlamaIndexRetriever(kb, strategy="ppr", k=5)
    for hit in retriever.retrieve("Who founded the Python Software Foundation?"):
        print(f"{hit.score:.3f}", hit.node.node_id, hit.node.metadata["section_title"])

It works offline: it only builds nodes from `kb.retrieve`. Nothing here reads or sets LlamaIndex's global
`Settings` (whose default LLM and embedding model are OpenAI's) or calls its tokenizers (NLTK data and tiktoken
encodings are downloaded on first use); a query engine built on this retriever needs an LLM you give it.

Needs the `llamaindex` extra (llama-index-core).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from llama_index.core.callbacks import CallbackManager
from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeRelationship, NodeWithScore, QueryBundle, RelatedNodeInfo, TextNode

from neoweave.mcp.contract import argument, check_strategy
from neoweave.mcp.views import plain, trace_summary

if TYPE_CHECKING:
    from neoweave.kb import KnowledgeBase
    from neoweave.query import RetrievalResult

SHOWN_TO_LLM = ("section_title", "url", "title")
"""Metadata LlamaIndex may print into an LLM prompt with a node's text (where it came from, for citations); the
ids, scores and the trace are for programs and stay out of prompts and embeddings."""


class NeoweaveLlamaIndexRetriever(BaseRetriever):
    """A neoweave strategy as a LlamaIndex retriever: one `NodeWithScore` per context chunk, in the strategy's
    order and with its score, then the facts, community reports and key points of the strategies that give them.

    A chunk's node has the chunk id as its id and its document as its source node; its metadata holds `kind`
    ("chunk"), `rank`, `chunk_id`, `section_id`, `doc_id`, `section_title` and `url` (when the section has them),
    `origin` (seed, link, walk, ...), `hop` (when the strategy followed links), `token_count`, `details`, and under
    `neoweave` the retrieval's strategy, parameters, context tokens, milliseconds and trace summary. The strategy,
    k and parameters are checked when the retriever is made; a refusal names the argument."""

    def __init__(self, kb: KnowledgeBase, strategy: str = "naive", k: int | None = None,
                 parameters: Mapping[str, Any] | None = None, *, callback_manager: CallbackManager | None = None,
                 verbose: bool = False) -> None:
        self.parameters = dict(parameters or {})
        check_strategy(kb, strategy, k, self.parameters)  # a bad strategy, k or parameter fails here, by name
        self.kb = kb
        self.strategy = strategy
        self.k = k
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        with argument("question"):
            question = self.kb.limits.question(query_bundle.query_str)
        return result_nodes(self.kb.retrieve(question, self.strategy, self.k, parameters=self.parameters))

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        """On a worker thread: retrieval blocks on the store and the embedder, not on the event loop."""
        return await asyncio.to_thread(self._retrieve, query_bundle)


def result_nodes(result: RetrievalResult) -> list[NodeWithScore]:
    """A retrieval result as scored LlamaIndex nodes (chunks, then facts, reports and key points)."""
    retrieval = plain({"strategy": result.strategy, "parameters": dict(result.parameters),
                       "context_tokens": result.context_tokens, "total_ms": round(result.cost.total_ms, 1),
                       "trace": trace_summary(result.trace)})
    nodes = []
    for rank, item in enumerate(result.items, 1):
        metadata: dict[str, Any] = {"kind": "chunk", "rank": rank, "chunk_id": item.chunk_id,
                                    "section_id": item.section_id, "doc_id": item.doc_id}
        if item.section_title:
            metadata["section_title"] = item.section_title
        if item.url:
            metadata["url"] = item.url
        metadata["origin"] = item.origin
        if "hop" in item.details:
            metadata["hop"] = item.details["hop"]
        metadata.update(token_count=item.token_count, details=plain(item.details), neoweave=retrieval)
        nodes.append(NodeWithScore(node=_node(item.chunk_id, item.text, metadata, source=item.doc_id),
                                   score=item.score))
    for rank, fact in enumerate(result.facts, 1):
        nodes.append(NodeWithScore(node=_node(f"fact:{rank}:{fact.source_id}|{fact.relation}|{fact.target_id}",
                                              fact.text(), {
            "kind": "fact", "rank": rank, "hop": fact.hop, "source_id": fact.source_id, "target_id": fact.target_id,
            "chunk_ids": list(fact.chunk_ids), "neoweave": retrieval}), score=fact.score))
    for rank, report in enumerate(result.reports, 1):
        nodes.append(NodeWithScore(node=_node(report.community_id, report.text, {
            "kind": "community_report", "rank": rank, "title": report.title, "level": report.level,
            "community_id": report.community_id, "neoweave": retrieval}), score=report.score))
    for rank, point in enumerate(result.points, 1):
        nodes.append(NodeWithScore(node=_node(f"point:{rank}", point.text, {
            "kind": "key_point", "rank": rank, "community_ids": list(point.community_ids), "neoweave": retrieval}),
            score=float(point.score)))
    return nodes


def _node(node_id: str, text: str, metadata: dict[str, Any], source: str | None = None) -> TextNode:
    """A text node whose ids, scores and trace stay out of what an LLM or embedding model is shown; a chunk's
    source node is its document (`node.ref_doc_id`)."""
    hidden = [key for key in metadata if key not in SHOWN_TO_LLM]
    relationships = {NodeRelationship.SOURCE: RelatedNodeInfo(node_id=source)} if source else {}
    return TextNode(id_=node_id, text=text, metadata=metadata, relationships=relationships,
                    excluded_llm_metadata_keys=hidden, excluded_embed_metadata_keys=hidden)
