"""Token accounting: every LLM call is recorded; totals by pipeline stage, by query, and in money.

Calls are attributed to the stage passed by the caller and to the query scope active in the calling context
(`with ledger.query_scope("q17"):`), so the evaluation harness can report tokens per question. The ledger
also appends each call to the SQLite file shared with the response cache, for `neoweave llm usage`.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

from neoweave.llm.store import LLMDatabase

# USD per 1M tokens (prompt, completion) for common hosted models; local models cost nothing.
DEFAULT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-3.5-turbo": (0.50, 1.50),
}

_current_query: contextvars.ContextVar[str | None] = contextvars.ContextVar("neoweave_query", default=None)


@dataclass
class LLMCall:
    """One request to a model, as it happened."""

    stage: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cached: bool = False
    retries: int = 0
    retry_causes: list[str] = field(default_factory=list)
    tokens_estimated: bool = False  # the server reported no usage: counted locally
    error: str | None = None
    query: str | None = None
    saved_tokens: int = 0  # a cache hit: the tokens the original call used (not spent again)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class Totals:
    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, call: LLMCall, cost: float) -> None:
        self.calls += 1
        self.cached_calls += int(call.cached)
        self.failed_calls += int(call.error is not None)
        self.retries += call.retries
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.latency_ms += call.latency_ms
        self.cost_usd += cost


class TokenLedger:
    def __init__(self, prices: dict[str, tuple[float, float]] | None = None,
                 database: LLMDatabase | None = None) -> None:
        self.prices = {**DEFAULT_PRICES, **(prices or {})}
        self.database = database
        self.calls: list[LLMCall] = []
        self._lock = threading.Lock()

    def cost(self, call: LLMCall) -> float:
        prompt_price, completion_price = self.prices.get(call.model, (0.0, 0.0))
        return (call.prompt_tokens * prompt_price + call.completion_tokens * completion_price) / 1_000_000

    def record(self, call: LLMCall) -> LLMCall:
        call.query = call.query or _current_query.get()
        with self._lock:
            self.calls.append(call)
        if self.database is not None:
            self.database.record_call({**asdict(call), "cost_usd": self.cost(call)})
        return call

    @contextlib.contextmanager
    def query_scope(self, query_id: str) -> Iterator[None]:
        """Attribute every call made in this context (this thread or task) to `query_id`."""
        token = _current_query.set(query_id)
        try:
            yield
        finally:
            _current_query.reset(token)

    def totals(self, *, stage: str | None = None, query: str | None = None) -> Totals:
        totals = Totals()
        with self._lock:
            calls = list(self.calls)
        for call in calls:
            if (stage is None or call.stage == stage) and (query is None or call.query == query):
                totals.add(call, self.cost(call))
        return totals

    def by_stage(self) -> dict[str, Totals]:
        with self._lock:
            stages = sorted({call.stage for call in self.calls})
        return {stage: self.totals(stage=stage) for stage in stages}
