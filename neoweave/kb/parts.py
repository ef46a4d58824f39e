"""What a knowledge base opens on first use and closes: the store, the embedder and the LLM gateways."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from neoweave.config import Settings

if TYPE_CHECKING:
    from neoweave.protocols import LLMClient, TextEmbedder
    from neoweave.store.base import GraphStore


class Parts:
    """Each part is made on first use (a CLI command that only reads the graph never loads a model); parts given
    by the caller are used as they are and not closed here. Thread-safe."""

    def __init__(self, settings: Settings, *, read_only: bool, store: GraphStore | None = None,
                 embedder: TextEmbedder | None = None, llm: LLMClient | None = None) -> None:
        self.settings = settings
        self.read_only = read_only
        self._store = store
        self._owns_store = store is None
        if store is not None and read_only:
            store.read_only = True
        self._embedder = embedder
        self._llm = llm
        self._judge_llm: LLMClient | None = None
        self._lock = threading.RLock()

    @property
    def store(self) -> GraphStore:
        """The graph store (the embedded FalkorDB starts on first use)."""
        with self._lock:
            if self._store is None:
                from neoweave.store import open_store

                self._store = open_store(self.settings)
                self._store.read_only = self.read_only
            return self._store

    @property
    def embedder(self) -> TextEmbedder:
        """The embedding model the graph was built with (its weights load on the first text embedded)."""
        with self._lock:
            if self._embedder is None:
                from neoweave.embeddings import Embedder

                self._embedder = Embedder(self.settings.embedding.model, runtime=self.settings.embedding.runtime)
            return self._embedder

    @property
    def embedder_made(self) -> TextEmbedder | None:
        """The embedder when one was given or made already (asking for it here does not make one)."""
        return self._embedder

    @property
    def llm(self) -> LLMClient:
        """The LLM gateway: the configured endpoint, or the local model server (started on first use)."""
        with self._lock:
            if self._llm is None:
                from neoweave.llm import create_gateway

                self._llm = create_gateway(self.settings)
            return self._llm

    @property
    def judge_llm(self) -> LLMClient:
        """The judge's gateway (`[judge]` settings); the answering gateway when both name the same model."""
        with self._lock:
            judge_settings = self.settings.judge_settings()
            if judge_settings.llm == self.settings.llm:
                return self.llm
            if self._judge_llm is None:
                from neoweave.llm import create_gateway

                self._judge_llm = create_gateway(judge_settings)
            return self._judge_llm

    @property
    def llm_started(self) -> bool:
        return self._llm is not None

    def close(self) -> None:
        """Close the store connection if it was opened here (the embedded server keeps running by design)."""
        with self._lock:
            if self._store is not None and self._owns_store:
                self._store.close()
                self._store = None
