"""What the knowledge base owns, and the guard every write goes through: the base of `KnowledgeBase`.

`KnowledgeBase` (kb/knowledge_base.py) adds the verbs; keeping the parts, their lifetime and the write guard here
keeps each file to one concern.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, Self

from neoweave.config import Settings
from neoweave.errors import NeoweaveError
from neoweave.kb.limits import Limits
from neoweave.kb.parts import Parts

if TYPE_CHECKING:
    from neoweave.protocols import LLMClient, TextEmbedder
    from neoweave.store.base import GraphStore
    from neoweave.store.read_limit import ReadBudget


class KnowledgeBaseCore:
    """The settings, limits and parts (store, embedder, LLM gateways) of one graph, their lifetime, and the write
    guard: whether the graph may be written, and what a write does to its stamp and ppr's walk index."""

    def __init__(self, settings: Settings, *, limits: Limits | None = None, read_only: bool = False,
                 embedder: TextEmbedder | None = None, llm: LLMClient | None = None,
                 store: GraphStore | None = None) -> None:
        """`store`, `embedder` and `llm` may be given (your own implementations, or shared ones); what is
        given is used as it is and not closed here."""
        self.settings = settings
        self.limits = limits or Limits()
        self.read_only = read_only
        self._parts = Parts(settings, read_only=read_only, store=store, embedder=embedder, llm=llm)
        self._checked = False

    # -- what it owns (`kb.parts`: each made on first use) ------------------------------------------
    @property
    def store(self) -> GraphStore:
        """The graph store (the embedded FalkorDB starts on first use)."""
        return self._parts.store

    @property
    def embedder(self) -> TextEmbedder:
        """The embedding model the graph was built with (its weights load on the first text embedded)."""
        return self._parts.embedder

    @property
    def llm(self) -> LLMClient:
        """The LLM gateway: the configured endpoint, or the local model server (started on first use)."""
        return self._parts.llm

    @property
    def judge_llm(self) -> LLMClient:
        """The judge's gateway (`[judge]` settings); the answering gateway when both name the same model."""
        return self._parts.judge_llm

    @property
    def llm_started(self) -> bool:
        return self._parts.llm_started

    def close(self) -> None:
        """Close the store connection (the embedded server keeps running for the next command by design)."""
        self._parts.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = (self.settings.neo4j.uri if self.settings.store.backend == "neo4j"
                 else f"{self.settings.falkordb.data_dir} ({self.settings.falkordb.graph})")
        return f"KnowledgeBase({self.settings.store.backend} {where}{', read-only' if self.read_only else ''})"

    def check_graph(self) -> dict[str, Any]:
        """The graph's Meta node, after checking it holds vectors of the configured model (once per object)."""
        from neoweave.embeddings import resolve_dimension

        meta = self.store.read_meta()
        if meta is None:
            raise NeoweaveError("the graph is empty", hint="run `neoweave ingest PATH` first (kb.ingest(PATH))")
        if not self._checked:
            made = self._parts.embedder_made
            dimension = made.dimension if made is not None else resolve_dimension(self.settings.embedding)
            self.store.check_meta(self.settings.embedding.model, dimension)
            self._checked = True
        return meta

    # -- the read limit -----------------------------------------------------------------------------
    def reading(self, what: str) -> AbstractContextManager[ReadBudget | None]:
        """Bound a reader's request (`what`, as its error names it: "the query", "the retrieval") by the read
        limit: `store.read_timeout` seconds of store time, each statement stopped in the store at what is left
        (`neoweave.store.read_limit`). The verbs that serve readers use it; front ends may wrap a call of their own."""
        from neoweave.store.read_limit import read_limit

        return read_limit(self.settings.store.read_timeout, what)

    # -- the write guard ----------------------------------------------------------------------------
    @contextmanager
    def _writing(self, what: str, *, walk_index: bool = False, progress: bool = False,
                 writes: frozenset[str] | None = None) -> Iterator[None]:
        """A write operation: refused read-only; its writes replace the graph's stamp once before and once after
        (`GraphStore.writing`); then `kb.walk.after_write` decides ppr's walk index: rebuilt (`walk_index`: enrich
        kg), kept across a span that declares `writes` (`graph_schema.footprint`) outside what it reads, else
        left behind the graph until the next rebuild."""
        from neoweave.kb.walk import after_write

        self._writable(what)
        with self.store.writing() as span:
            yield
        after_write(self.store, what, build=walk_index, progress=progress, span=span, writes=writes)

    def _writable(self, what: str) -> None:
        if self.read_only:
            from neoweave.errors import ReadOnlyViolation

            raise ReadOnlyViolation(f"{what} writes to the graph, and this knowledge base was opened read-only",
                                    hint="open it with read_only=False")
