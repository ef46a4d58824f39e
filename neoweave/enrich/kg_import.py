"""Entities and relations made elsewhere (LangChain GraphDocuments, an external extractor), written as the
kg step writes its own: per chunk, replacing that chunk's earlier extraction, then the kg step's graph-wide
phases (title mentions, entity embeddings, resolution, homes, inferred links).

The caller says which chunk each mention and relation was read from (`ChunkExtraction` per chunk). Importing
again replaces those chunks' extraction (idempotent); the chunks' signature records the origin and a hash of
what was imported. A later `enrich kg` run replaces an imported chunk as it replaces any other method's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import ClassVar

from neoweave.enrich import resolution
from neoweave.enrich.base import ChunkRow, EnrichReport, StepContext
from neoweave.enrich.kg import KnowledgeGraphStep
from neoweave.enrich.runner import run
from neoweave.nlp.extraction import ChunkExtraction, redirect


@dataclass
class ImportedGraphStep(KnowledgeGraphStep):
    """The kg step with extraction replaced by given per-chunk results (not registered: built by `import_graph`)."""

    methods: ClassVar[tuple[str, ...]] = ("import",)
    method: str = "import"
    origin: str = "import"
    """Who made the graph (recorded in the signature and on the mentions' source), e.g. 'langchain'."""
    prepared: dict[str, ChunkExtraction] = field(default_factory=dict, repr=False, compare=False)

    def model_name(self, ctx: StepContext) -> str:
        digest = hashlib.sha1(json.dumps({k: asdict(v) for k, v in sorted(self.prepared.items())},
                                         sort_keys=True, default=str).encode()).hexdigest()[:12]
        return f"{self.origin}/{digest}"

    def extract(self, chunks: list[ChunkRow], ctx: StepContext, report: EnrichReport) -> list[ChunkExtraction]:
        results = [self.prepared.get(c.id) or ChunkExtraction(c.id, "import") for c in chunks]
        redirect(results, resolution.final_survivors(ctx.store, sorted({m.id for r in results for m in r.mentions})))
        return results


def import_graph(store, extractions: list[ChunkExtraction], *, embedder, origin: str = "import",
                 progress: bool = False, **parameters) -> EnrichReport:
    """Write `extractions` (one per chunk) into the entity layer; `parameters` are the kg step's (resolve,
    title_mentions, ...)."""
    prepared = {extraction.chunk_id: extraction for extraction in extractions}
    step = ImportedGraphStep(origin=origin, prepared=prepared, **parameters)
    return run(step, store, embedder=embedder, chunk_ids=sorted(prepared), progress=progress)
