"""The retrieval contract every strategy follows, and the registry that finds strategies by name.

A strategy is a small class whose dataclass fields are its parameters, with the paper's values as defaults.
`retrieve(question, **overrides)` returns a `RetrievalResult`: the ordered context, the trace of the graph
walk (nodes and relationships visited, named statements run) and the cost (time per stage, LLM calls and
tokens). Strategies run a few set-oriented Cypher statements each, never one query per node.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.parameters import check_at_least, parse_parameter
from neoweave.query.trace import (  # noqa: F401  (re-exported: strategies import them here)
    CHUNK_EMBEDDING_REPAIR,
    LINK_CONTEXT_REPAIR,
    REPORT_REPAIR,
    Trace,
    servable_chunks,
)
from neoweave.registry import STRATEGIES

if TYPE_CHECKING:  # the result types load without the store (a command answered by a running server)
    from neoweave.protocols import LLMClient, TextEmbedder
    from neoweave.store.base import GraphStore


@dataclass
class ContextItem:
    """One piece of retrieved context, with where it came from."""

    text: str
    chunk_id: str
    section_id: str
    doc_id: str
    score: float
    origin: str  # which part of the strategy produced it: "seed", "link", ...
    section_title: str = ""
    url: str = ""
    token_count: int = 0
    details: dict[str, Any] = field(default_factory=dict)  # e.g. the link followed and its hop

    @classmethod
    def from_row(cls, row: dict[str, Any], origin: str, details: dict[str, Any] | None = None) -> ContextItem:
        """A chunk row as every retrieval statement returns it (chunk_id, text, doc_id, section_id, ...)."""
        return cls(text=row["text"], chunk_id=row["chunk_id"], section_id=row["section_id"], doc_id=row["doc_id"],
                   score=float(row["score"]), origin=origin, section_title=row["section_title"] or "",
                   url=row["url"] or "", token_count=int(row["token_count"] or 0), details=details or {})


EVERY_RELATION = -1e9
"""`min_score` of `kg_entity_relations` that returns every relation (scores are cosine + a small bonus)."""
MAX_CHUNKS_PER_FACT = 5
"""`max_chunks` of `kg_entity_relations`: source chunks a fact carries (the first are read as its passages)."""


@dataclass
class Fact:
    """A relation between two entities given as context (the kg retriever), with the chunks it was read from."""

    source_id: str
    source: str
    relation: str
    target_id: str
    target: str
    description: str
    weight: float
    score: float
    hop: int
    chunk_ids: list[str] = field(default_factory=list)
    token_count: int = 0

    @classmethod
    def from_relation_row(cls, row: dict[str, Any], score: float, hop: int) -> Fact:
        """A `kg_entity_relations` row (seen from `entity_id`) as a fact in the relation's own direction."""
        ends = [(row["entity_id"], row["entity_name"]), (row["other_id"], row["other_name"])]
        (source_id, source), (target_id, target) = ends if row["source_id"] == row["entity_id"] else ends[::-1]
        return cls(source_id, source or source_id, row["type"] or "related", target_id, target or target_id,
                   row["description"] or "", float(row["weight"] or 0.0), score, hop, list(row["chunk_ids"] or []))

    def text(self) -> str:
        line = f"{self.source} -[{self.relation}]- {self.target}"
        return f"{line}: {self.description}" if self.description else line


@dataclass
class ReportItem:
    """A community report given as context (community search), with the question's entities it holds."""

    community_id: str
    level: int
    title: str
    text: str
    rating: float
    score: float
    entity_ids: list[str] = field(default_factory=list)
    token_count: int = 0


@dataclass
class KeyPoint:
    """A partial answer from the map step of global search, scored 0-100 for how much it helps answer the
    question, with the community reports it was read from."""

    text: str
    score: int
    community_ids: list[str] = field(default_factory=list)
    token_count: int = 0


@dataclass
class SubQuestion:
    """One step of an iterative strategy (recursive rounds, a PankRAG plan node): what was asked, how it was
    rewritten with the answers it depends on, what it retrieved and the intermediate answer the model gave."""

    id: str
    question: str
    depends_on: list[str] = field(default_factory=list)
    asked: str = ""
    """The question as retrieved for: rewritten with the answers it depends on (PankRAG), else the question."""
    answer: str = ""
    chunk_ids: list[str] = field(default_factory=list)
    strategy: str = ""
    """The strategy that retrieved for it."""
    round: int = 0
    """Recursive: the round that asked it; PankRAG: its level in the plan (0 = no dependency)."""
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Cost:
    milliseconds: dict[str, float] = field(default_factory=dict)  # per stage
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # tokens of LLM calls answered from the cache (needed, but not spent again)
    cached_calls: int = 0  # LLM calls answered from the cache (their time and tokens were not spent again)
    llm_failures: int = 0  # calls that gave no usable answer (invalid output after a re-ask, endpoint errors)

    @property
    def total_ms(self) -> float:
        return sum(self.milliseconds.values())

    def count_calls(self, calls: list[Any], ok: bool) -> None:
        """One LLM reply's calls (retries included; a call the endpoint refused is a call too; `ok` False counts
        a failure)."""
        self.llm_calls += max(len(calls), 1)
        for call in calls:
            self.prompt_tokens += call.prompt_tokens
            self.completion_tokens += call.completion_tokens
            self.cached_tokens += call.saved_tokens
            self.cached_calls += int(call.cached)
        if not ok:
            self.llm_failures += 1

    def add_calls(self, other: Cost) -> None:
        """Another cost's LLM calls and tokens (a sub-retrieval's), added to this one's."""
        self.llm_calls += other.llm_calls
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.cached_tokens += other.cached_tokens
        self.cached_calls += other.cached_calls
        self.llm_failures += other.llm_failures

    @contextmanager
    def timed(self, stage: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.milliseconds[stage] = self.milliseconds.get(stage, 0.0) + (time.perf_counter() - started) * 1000


@dataclass
class RetrievalResult:
    question: str
    strategy: str
    parameters: dict[str, Any]
    items: list[ContextItem]
    trace: Trace
    cost: Cost
    facts: list[Fact] = field(default_factory=list)
    """Entity relations given as context beside the chunks (strategies over the entity graph)."""
    reports: list[ReportItem] = field(default_factory=list)
    """Community reports given as context (community search)."""
    points: list[KeyPoint] = field(default_factory=list)
    """Partial answers given as context, most helpful first (global search's map step)."""
    sub_questions: list[SubQuestion] = field(default_factory=list)
    """Iterative strategies: the sub-questions asked, their answers and contexts (shown to the answer prompt)."""
    answer: str | None = None
    """Set when the strategy already knows the answer without a further LLM call (global search when no
    report helped: Insufficient Information)."""

    @property
    def context_tokens(self) -> int:
        return (sum(item.token_count for item in self.items) + sum(fact.token_count for fact in self.facts)
                + sum(report.token_count for report in self.reports)
                + sum(point.token_count for point in self.points))

    def as_dict(self) -> dict[str, Any]:
        data = dataclasses.asdict(self)
        data["cost"]["total_ms"] = self.cost.total_ms
        data["context_tokens"] = self.context_tokens
        return data


_NOT_PARAMETERS = ("store", "embedder", "llm")
PROFILES = ("neoweave", "paper")
"""`profile` values: neoweave's defaults, or the seed paper's method as published."""


@dataclass
class Strategy:
    """Base of every retrieval strategy. Subclasses are dataclasses; their own fields are the parameters."""

    name: ClassVar[str]
    needs_llm: ClassVar[bool] = False
    """True for a strategy that calls the LLM while retrieving (global search's map step)."""
    llm_free: ClassVar[dict[str, Any]] = {}
    """Parameter overrides under which the strategy retrieves without an LLM (its LLM stages off), when it can:
    `wants_llm(llm_free)` is False then (`registry.llm_free_strategies`: tests, benchmarks and copies compare
    strategies this way)."""
    reads_link_contexts: ClassVar[bool] = False
    """True for a strategy that scores hyperlinks by their context embeddings (LARAG, ppr), or may run one (the
    strategies that compose others): it ranks links by the contexts that ingest and `enrich kg` embed, and skips
    a link without one, saying so in the trace's notes."""
    requires: ClassVar[tuple[str, ...]] = ()
    """Enrich steps the strategy needs on the graph (besides ingest); it stops with an error naming them."""
    returns_passages: ClassVar[bool] = True
    """False for a strategy whose context is not passages (global search's key points): evaluations leave its
    evidence metrics out instead of scoring it zero."""
    paper: ClassVar[dict[str, Any] | None] = None
    """The seed paper's method as parameter values (`profile="paper"`); None for neoweave's own strategies."""
    paper_source: ClassVar[str] = ""
    """Where the paper states that method (document and lines in `../shared/seeds/`)."""
    store: GraphStore = field(repr=False)
    embedder: TextEmbedder = field(repr=False)
    llm: LLMClient | None = field(default=None, repr=False)
    """The LLM gateway, for strategies that need one to retrieve."""
    profile: str = "neoweave"
    """neoweave: the defaults below, measured on both dev sets; paper: the seed paper's method as published
    (`paper` values override the defaults; parameters given beside `profile` override both; docs/strategies
    tells, per strategy, what differs and why)."""

    @classmethod
    def wants_llm(cls, overrides: dict[str, Any] | None = None) -> bool:
        """Whether the strategy with these parameter overrides calls the LLM while retrieving (so a caller starts
        a model only when one is needed); `needs_llm` unless a strategy's stages can be switched off."""
        return cls.needs_llm

    def parameters(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name not in _NOT_PARAMETERS}

    @classmethod
    def parse_parameter(cls, text: str) -> tuple[str, Any]:
        """'n_links=2' -> ('n_links', 2), typed like the parameter's default (command-line overrides)."""
        return parse_parameter(cls, text, what=f"strategy '{cls.name}'", skip=_NOT_PARAMETERS)

    def with_overrides(self, **overrides: Any) -> Strategy:
        known = set(self.parameters())
        unknown = set(overrides) - known
        if unknown:
            raise NeoweaveError(f"strategy '{self.name}' has no parameter {sorted(unknown)}; "
                                f"its parameters: {sorted(known)}")
        if "profile" in overrides:  # the profile's values first, then whatever else was given
            overrides = {**self.profile_values(str(overrides["profile"])), **overrides}
        return dataclasses.replace(self, **overrides)  # type: ignore[type-var]

    @classmethod
    def profile_values(cls, profile: str) -> dict[str, Any]:
        """The parameter values a profile sets: the paper's method, or neoweave's defaults of those parameters."""
        if profile not in PROFILES:
            raise NeoweaveError(f"strategy '{cls.name}': profile must be one of {', '.join(PROFILES)}, "
                                f"got {profile!r}")
        if cls.paper is None:
            if profile == "paper":
                raise NeoweaveError(f"strategy '{cls.name}' is neoweave's own: it has no published method to "
                                    "reproduce", hint="profile=paper exists for " + ", ".join(
                                        name for name in STRATEGIES.names() if STRATEGIES.get(name).paper))
            return {}
        if profile == "paper":
            return dict(cls.paper)
        defaults = {f.name: f.default for f in dataclasses.fields(cls) if f.name in cls.paper}
        return {name: value for name, value in defaults.items() if value is not dataclasses.MISSING}

    def retrieve(self, question: str, **overrides: Any) -> RetrievalResult:
        strategy = self.with_overrides(**overrides) if overrides else self
        strategy.validate()
        if not isinstance(question, str) or not question.replace("\x00", "").strip():
            raise NeoweaveError("the question is empty", hint="ask something, e.g. neoweave query \"How do I ...?\"")
        question = question.replace("\x00", "")
        trace, cost = Trace(), Cost()
        result = RetrievalResult(question, self.name, strategy.parameters(), [], trace, cost)
        # one state of the graph for all its reads, unless it calls the LLM between them (a writer would wait
        # for the model)
        with nullcontext() if strategy.wants_llm(strategy.parameters()) else self.store.consistent_reads():
            items = strategy._retrieve(question, trace, cost, result)
        # a chunk without its text (a write left it out) has nothing to show: never served, whatever reached it
        trace.skip_chunks(self.name, [item.chunk_id for item in items if item.text is None])
        result.items = [item for item in items if item.text is not None]
        return result

    def validate(self) -> None:
        """Reject parameter values that make no sense, naming the parameter."""

    def _at_least(self, minimum: int, *names: str) -> None:
        """Every named numeric parameter is >= minimum, else an error naming it."""
        check_at_least(self, self.name, minimum, *names)

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        """The ordered context chunks; strategies that give other context (facts) add it to `result`."""
        raise NotImplementedError

    # shared steps -------------------------------------------------------------------------------
    def _run(self, trace: Trace, name: str, params: dict[str, Any], *, write: bool = False) -> list[dict[str, Any]]:
        trace.statements.append(name)
        started = time.perf_counter()
        try:
            return self.store.run(name, params, write=write)
        finally:
            trace.add_statement_ms(name, (time.perf_counter() - started) * 1000)

    def _skip_unembedded_links(self, statement: str, params: dict[str, Any], trace: Trace, cost: Cost) -> None:
        """Note the links about to be ranked by their context that have no context embedding: the expansion
        statements leave them out (an unembedded link cannot be ranked), and the trace says so with what repairs
        them. The commands that write links embed them in the same write unit; retrieval only reads."""
        with cost.timed("graph"):
            missing = self._run(trace, statement, params)
        trace.skip_links(self.name, ((row["source_id"], row["target_id"]) for row in missing))

    def _seed(self, question: str, k: int, trace: Trace, cost: Cost) -> tuple[list[float], list[ContextItem]]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)
        with cost.timed("graph"):
            rows = self._run(trace, "chunk_vector_search", {"k": k, "embedding": embedding})
        for row in rows:
            trace.chunk(row["section_id"], row["chunk_id"])
        return embedding, [ContextItem.from_row(row, "seed") for row in rows]


register = STRATEGIES.register
"""Class decorator: make a strategy available by its `name` (CLI, evaluation harness)."""


def strategy(name: str, store: GraphStore, embedder: TextEmbedder, llm: LLMClient | None = None,
             **parameters: Any) -> Strategy:
    """The strategy `name` with its default parameters, overridden by `parameters`."""
    instance = STRATEGIES.get(name)(store, embedder, llm)
    return instance.with_overrides(**parameters) if parameters else instance


def available() -> list[str]:
    return STRATEGIES.names()
