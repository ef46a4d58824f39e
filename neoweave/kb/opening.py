"""Ways to get a knowledge base: `open_kb` (what `neoweave.open()` calls) and `evaluate` (one evaluation in a
knowledge base of its own)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neoweave.config import Settings, load_settings
from neoweave.errors import NeoweaveError
from neoweave.kb.knowledge_base import KnowledgeBase
from neoweave.kb.limits import Limits

if TYPE_CHECKING:
    from neoweave.eval.pipeline import EvalOutcome
    from neoweave.eval.runner import RunConfig
    from neoweave.protocols import LLMClient, TextEmbedder


def open_kb(path: str | Path | None = None, *, config: str | Path | None = None, settings: Settings | None = None,
         limits: Limits | None = None, read_only: bool = False, embedder: TextEmbedder | None = None,
         llm_client: LLMClient | None = None, **sections: Mapping[str, Any]) -> KnowledgeBase:
    """A knowledge base over the data directory `path` (the embedded store's home; default `.neoweave`, or
    what neoweave.toml / NEOWEAVE_DATA_DIR say).

    `sections` override settings by section, e.g. `llm={"base_url": "http://localhost:11434/v1",
    "model": "qwen2.5:7b"}`, `store={"backend": "neo4j"}`, `embedding={"runtime": "torch"}`. `embedder` and
    `llm_client` plug in your own implementations of `neoweave.protocols.TextEmbedder` / `LLMClient`.
    `read_only=True` refuses every write to the graph (servers use it).
    """
    if settings is None:
        overrides: dict[str, dict[str, Any]] = {name: dict(values) for name, values in sections.items()}
        if path is not None:
            overrides.setdefault("falkordb", {})["data_dir"] = Path(path)
        settings = load_settings(config, overrides=overrides)
    elif sections or path is not None or config is not None:
        raise NeoweaveError("give either settings=... or path/config/section overrides, not both")
    return KnowledgeBase(settings, limits=limits, read_only=read_only, embedder=embedder, llm=llm_client)


def evaluate(settings: Settings, qa: str | Path, config: RunConfig, out: str | Path, **options: Any) -> EvalOutcome:
    """One evaluation in a knowledge base of its own (unbounded limits), closed afterwards: for scripts and
    benchmarks that only evaluate. `options` are `KnowledgeBase.evaluate`'s."""
    with KnowledgeBase(settings, limits=Limits.unbounded()) as kb:
        return kb.evaluate(qa, config, out, **options)
