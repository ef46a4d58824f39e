"""The seams a user can plug into: what an embedder and an LLM client must provide.

neoweave's own `Embedder` (sentence-transformers or ONNX Runtime) and `LLMGateway` (any OpenAI-compatible
endpoint, or the local model) implement these; so can yours, passed to `neoweave.open(embedder=..., llm=...)`.
Every signature that takes an embedder or an LLM is typed with these Protocols, not with the classes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

if TYPE_CHECKING:
    from pydantic import BaseModel

    from neoweave.llm.gateway import ChatResult, StructuredResult
    from neoweave.llm.ledger import TokenLedger
    from neoweave.llm.streaming import ChatStream

ModelT = TypeVar("ModelT", bound="BaseModel")


@runtime_checkable
class TextEmbedder(Protocol):
    """Unit-length text vectors from one model, and token counts as that model sees them."""

    model_name: str
    """Recorded in the graph's Meta node: a graph refuses vectors of another model."""

    @property
    def dimension(self) -> int: ...

    @property
    def max_tokens(self) -> int:
        """Tokens the model reads of a text (longer texts are truncated when embedded)."""
        ...

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One L2-normalised vector per text, in order; safe to call from several threads."""
        ...

    def embed_query(self, text: str) -> list[float]: ...

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, untruncated (context budgets are counted with it)."""
        ...

    def token_counter(self) -> Callable[[list[str]], list[int]]:
        """A counting function that may run in another thread while `embed` runs."""
        ...


@runtime_checkable
class LLMClient(Protocol):
    """A chat model behind neoweave's answer prompts, strategies, enrich steps and judge."""

    model: str
    endpoint: str
    concurrency: int
    """Requests worth sending at once (map-reduce steps use as many workers)."""
    server_pid: int | None
    """A local model server's process, for resource measurements (None for a remote endpoint)."""
    ledger: TokenLedger

    def chat(self, messages: list[dict[str, Any]], *, stage: str = "default", max_tokens: int | None = None,
             temperature: float | None = None, cache: bool = True) -> ChatResult:
        """One completion; raises `neoweave.llm.LLMError` when the endpoint fails after its retries."""
        ...

    def structured(self, messages: list[dict[str, Any]], response_model: type[ModelT], *, stage: str = "default",
                   max_tokens: int | None = None, cache: bool = True, mode: Any = None
                   ) -> StructuredResult[ModelT]:
        """A `response_model` instance parsed from the answer (`error` set when it could not be)."""
        ...


@runtime_checkable
class StreamingLLMClient(LLMClient, Protocol):
    """An LLM client that can also stream a completion (streamed answers; a client without it answers in one
    piece)."""

    def chat_stream(self, messages: list[dict[str, Any]], *, stage: str = "default", max_tokens: int | None = None,
                    temperature: float | None = None, cache: bool = True) -> ChatStream:
        """The completion's text in pieces (iterate once); `.result` holds the whole `ChatResult` afterwards."""
        ...
