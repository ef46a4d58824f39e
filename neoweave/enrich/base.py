"""The enrichment framework: steps registered by name, run over the chunks they have not processed yet.

A step is a small dataclass (its fields are typed parameters with documented defaults) with three parts:
`extract` turns a batch of chunks into derivations without touching the graph (spaCy, an LLM),
`write` queues the statements that store them, and `finish` runs the step's graph-wide phases
(resolution, homes, embeddings). The runner writes each batch as one unit together with the chunks'
step signature, so a run killed at any point resumes where it stopped and never doubles anything.
Before writing, the step `forget`s what it derived from those chunks earlier (a re-run with another
method replaces, never adds); ingest forgets the same derivations for chunks it is about to delete
(`neoweave/store/provenance.py` names the statements for both).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.parameters import check_at_least
from neoweave.protocols import LLMClient, TextEmbedder
from neoweave.store.base import GraphStore, WriteUnit
from neoweave.store.provenance import forget_step_chunks

log = logging.getLogger(__name__)
FAST_CHUNKS_PER_UNIT = 64
"""Chunks a fast method writes per unit: a reader served meanwhile waits for the unit in progress (128 held the
snapshot gate up to 1.2 s on 2 loaded cores; docs/benchmarks/reader_wait.md)."""
EXTRACT_AGAIN_CHUNKS_PER_UNIT = 16
"""Chunks the kg step rewrites per unit when merges are dissolved: forgetting and rewriting a chunk that mentions a
survivor costs more than a new chunk's extraction (docs/benchmarks/reader_wait.md, Python docs FAQ)."""
TITLE_SCAN_CHUNKS_PER_UNIT = 250
"""Chunks the title scan writes per unit (their title mentions and scan marks): 500 held readers served meanwhile
longer than the reader-wait target on the Python docs FAQ (docs/benchmarks/reader_wait.md)."""


@dataclass
class ChunkRow:
    id: str
    text: str
    section_id: str
    doc_id: str
    order: int = 0


@dataclass
class EnrichReport:
    step: str
    method: str
    signature: str
    chunks: int = 0
    batches: int = 0
    seconds: float = 0.0
    extract_seconds: float = 0.0
    write_seconds: float = 0.0
    finish_seconds: float = 0.0
    counters: dict[str, int] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    failures: list[str] = field(default_factory=list)
    phase_seconds: dict[str, float] = field(default_factory=dict)
    """Wall time of each graph-wide phase (title mentions, embeddings, resolution, homes, links)."""
    finish_skipped: bool = False
    """The graph-wide phases did not run: no chunk was processed and the graph, the step's parameters and the
    code are those of their last completed run (`enrich.finish_record`)."""

    def count(self, name: str, amount: int = 1) -> None:
        self.counters[name] = self.counters.get(name, 0) + amount

    @property
    def chunks_per_second(self) -> float:
        return self.chunks / self.seconds if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["chunks_per_second"] = round(self.chunks_per_second, 2)
        return data


@dataclass
class StepContext:
    """What a step may use: the store, the embedder, the LLM gateway (only for `llm`), progress bars."""

    store: GraphStore
    embedder: TextEmbedder | None = None
    llm: LLMClient | None = None
    progress: bool = True


RUNNER_WRITES = frozenset({"Chunk.enriched"})
"""What the runner writes for every step: the step signatures that processed each chunk."""


@dataclass
class EnrichStep:
    """Base of every enrich step; subclasses are dataclasses whose own fields are their parameters."""

    name: ClassVar[str]
    version: ClassVar[int] = 1
    methods: ClassVar[tuple[str, ...]] = ("fast", "llm")
    vector_labels: ClassVar[tuple[str, ...]] = ("Chunk",)
    """Vector-indexed labels whose nodes the step updates (FalkorDB rebuilds those indexes after a run)."""
    writes: ClassVar[frozenset[str] | None] = None
    """What the step writes besides each chunk's `enriched` marker (the runner's, `RUNNER_WRITES`): labels,
    relationship types and properties (`graph_schema.footprint`; tests/test_enrich_footprints.py runs each
    declared step and checks it changed nothing else). None: not declared, it may write anything. The knowledge
    base keeps ppr's walk index across a step that writes nothing the index reads, instead of rebuilding it."""
    graph_wide: ClassVar[bool] = False
    """True for a step that works on the graph as a whole (communities), not chunk by chunk: the runner goes
    straight to `finish`, which is resumable by itself."""

    method: str = "fast"
    """fast: no LLM (NLP, statistics); llm: the LLM gateway."""
    batch_size: int | None = None
    """Chunks extracted and written per unit (None: `FAST_CHUNKS_PER_UNIT` for fast, 8 for llm, so progress shows,
    a killed run loses little and a query served meanwhile waits for a short unit; the LLM's answers are cached
    anyway)."""

    @property
    def prefetch(self) -> bool:
        """Extract the next batch while this one is written. Fast extraction (CPU, a few seconds a batch)
        overlaps the writes; LLM extraction (minutes a batch, the writes negligible) stays inline, so an
        interrupt stops it at once."""
        return self.method == "fast"

    @property
    def chunks_per_unit(self) -> int:
        return self.batch_size or (8 if self.method == "llm" else FAST_CHUNKS_PER_UNIT)

    def parameters(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def validate(self) -> None:
        if self.method not in self.methods:
            raise NeoweaveError(f"enrich {self.name}: method must be one of {', '.join(self.methods)}, "
                                f"got {self.method!r}")
        if self.batch_size is not None:
            self._at_least(1, "batch_size")

    def _at_least(self, minimum: int, *names: str) -> None:
        """Every named integer parameter is >= minimum, else an error naming it."""
        check_at_least(self, f"enrich {self.name}", minimum, *names)

    @property
    def prefix(self) -> str:
        return f"{self.name}@"

    def signature(self, ctx: StepContext) -> str:
        """What a chunk records: re-processing happens when any part of it changes."""
        return f"{self.prefix}{self.version}:{self.method}:{self.model_name(ctx)}"

    def model_name(self, ctx: StepContext) -> str:
        return ""

    def touched_vector_labels(self, report: EnrichReport) -> tuple[str, ...]:
        """The vector-indexed labels this run wrote to (their FalkorDB indexes are rebuilt); none for a no-op."""
        return self.vector_labels if report.chunks else ()

    def chunk_signature(self, signature: str, extracted: Any) -> str:
        """What one chunk records; a step marks chunks it could not do fully so the next run retries them."""
        return signature

    # the three parts ------------------------------------------------------------------------------
    def extract(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> Any:
        raise NotImplementedError

    def forget(self, unit: WriteUnit, chunk_ids: list[str]) -> None:
        """Queue statements removing what this step derived from chunks (before rewrite or deletion): its entry in
        `store.provenance.CHUNK_DERIVATIONS`, the same statements ingest runs for chunks it deletes."""
        forget_step_chunks(unit, self.name, chunk_ids)

    def write(self, unit: WriteUnit, extracted: Any, ctx: StepContext, report: EnrichReport) -> None:
        raise NotImplementedError

    def finish(self, ctx: StepContext, report: EnrichReport) -> None:
        """Graph-wide phases after the chunk batches (each resumable on its own)."""

    def close(self) -> None:
        """Release what the run held (worker processes); the runner calls it when the run ends."""


@contextmanager
def timed(report: EnrichReport, attribute: str) -> Iterator[None]:
    """Add the block's wall time to one of the report's second counters."""
    started = time.perf_counter()
    try:
        yield
    finally:
        setattr(report, attribute, getattr(report, attribute) + time.perf_counter() - started)


@contextmanager
def phase(report: EnrichReport, name: str) -> Iterator[None]:
    """Add the block's wall time to `report.phase_seconds[name]` (a graph-wide phase)."""
    started = time.perf_counter()
    try:
        yield
    finally:
        report.phase_seconds[name] = round(report.phase_seconds.get(name, 0.0) + time.perf_counter() - started, 3)
