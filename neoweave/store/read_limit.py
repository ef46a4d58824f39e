"""How long one reader's request may keep the graph store busy: a budget of store time, per request.

A request a person or client sends (a typed Cypher query, a retrieval, an answer's or an explanation's reads, an
MCP read tool) runs inside `read_limit(seconds, what)`. Every read statement it sends gets what is left of the
budget as the store's own limit (FalkorDB's per-query timeout, Neo4j's transaction timeout), so the store stops a
runaway query itself and keeps serving everyone else; the time each statement takes, waiting included, is taken
from the budget, and once it is spent the next statement is refused before it is sent. Only store time counts:
embedding, LLM calls (bounded by `llm.timeout`) and in-memory ranking between statements do not, so an answer from
a slow local model is not cut short by a limit meant for the store. Writes (ingest, enrich, sync) are never bounded.

The budget is a context variable: it follows the request through the strategies' statements on its own thread,
and into worker threads started with a copy of the context (`contextvars.copy_context`); threads started without
one (the walk index's background build) read unbounded.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TypeVar

from neoweave.errors import ReadTimeout

T = TypeVar("T")

SETTING = "store.read_timeout / --timeout"
"""Where the limit is set, as the error names it."""

_budget: ContextVar[ReadBudget | None] = ContextVar("neoweave_read_budget", default=None)


class ReadBudget:
    """Seconds of store time left to one request (`what`: the query, the retrieval, ...). Thread-safe: worker threads
    of one request share it."""

    def __init__(self, seconds: float, what: str) -> None:
        self.seconds = seconds
        self.what = what
        self.spent = 0.0
        self._lock = threading.Lock()

    def remaining(self) -> float:
        with self._lock:
            return self.seconds - self.spent

    def spend(self, seconds: float) -> None:
        with self._lock:
            self.spent += seconds

    def exceeded(self) -> ReadTimeout:
        """The error a request past its limit ends with: what ran long, the limit, and where to change it."""
        return ReadTimeout(f"{self.what} ran longer than the {self.seconds:g} s read limit ({SETTING})",
                           hint="ask for less (a label, an indexed property or a LIMIT in a query; a smaller k or "
                                "fewer hops in a retrieval), or raise the limit: store.read_timeout in "
                                "neoweave.toml, NEOWEAVE_READ_TIMEOUT, or --timeout SECONDS (0: no limit)")


def current() -> ReadBudget | None:
    """The budget of the request this thread serves, if any."""
    return _budget.get()


@contextmanager
def read_limit(seconds: float | None, what: str) -> Iterator[ReadBudget | None]:
    """Bound the store reads of the block by `seconds` of store time (None or 0: unbounded). Inside a block that
    already has a budget (an explanation that answers first), the outer one goes on: a request has one budget."""
    outer = _budget.get()
    if outer is not None or not seconds:
        yield outer
        return
    budget = ReadBudget(seconds, what)
    token = _budget.set(budget)
    try:
        yield budget
    finally:
        _budget.reset(token)


def bounded_iterator(budget: ReadBudget | None, items: Iterator[T]) -> Iterator[T]:
    """`items` with each step run under `budget`: a generator (a streamed answer) is resumed by whoever reads it,
    on whatever thread, so the budget is set around each step rather than once."""
    while True:
        token = _budget.set(budget)
        try:
            item = next(items)
        except StopIteration:
            return
        finally:
            _budget.reset(token)
        yield item


def bounded_read(execute: Callable[[float | None], T]) -> T:
    """`execute(timeout)` for one read statement: the store's limit is what is left of the request's budget (None
    outside a request). A statement the store stopped (`ReadTimeout` from the backend), or one the budget no longer
    covers, ends the request with the budget's error."""
    budget = _budget.get()
    if budget is None:
        return execute(None)
    left = budget.remaining()
    if left <= 0:
        raise budget.exceeded()
    started = time.perf_counter()
    try:
        return execute(left)
    except ReadTimeout as exc:
        raise budget.exceeded() from exc
    finally:
        budget.spend(time.perf_counter() - started)
