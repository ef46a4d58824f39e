"""One evaluation end to end: open the graph, ingest the corpus if needed, run, score, report."""

from __future__ import annotations

import logging
import os
import platform
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neoweave.config import Settings
from neoweave.errors import NeoweaveError
from neoweave.eval.runner import EvalRun, RunConfig, load_qa, run, summarize, write_report
from neoweave.registry import STRATEGIES

log = logging.getLogger(__name__)


@dataclass
class EvalOutcome:
    evaluation: EvalRun
    rows: list[dict[str, Any]]
    report: Path
    setup: dict[str, Any]


def _git_commit() -> str | None:
    try:
        result = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5,
                                cwd=Path(__file__).resolve().parent)
    except (OSError, subprocess.SubprocessError):
        return None
    if result.returncode != 0:
        return None
    return result.stdout.strip() or None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def evaluate(settings: Settings, qa: Path, config: RunConfig, out: Path, *, corpus: Path | None = None,
             base_url: str | None = None, limit: int | None = None, types: list[str] | None = None,
             title: str | None = None, progress: bool = True) -> EvalOutcome:
    """Run `config` over the QA set in the configured graph and write the report to `out`.

    `types` keeps only questions of those types; `limit` then keeps the first N of them.
    """
    from neoweave.embeddings import Embedder
    from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
    from neoweave.store import open_store

    questions = load_qa(qa)
    if types:
        known = {q.type for q in questions}
        unknown = sorted(set(types) - known)
        if unknown:
            raise NeoweaveError(f"{qa}: no questions of type {unknown}; its types: {sorted(known)}")
        questions = [q for q in questions if q.type in types]
    questions = questions[:limit]
    from neoweave.query.router import configured

    if "router" in config.strategies:
        config.parameters["router"] = configured(settings, "router", config.parameters.get("router", {}))
    embedder = Embedder(settings.embedding.model)
    llm = None
    with open_store(settings) as store:
        if corpus is not None:
            options = IngestOptions(sources=SourceOptions(base_url=base_url), progress=progress)
            ingested = Ingestor(store, embedder, options).ingest(corpus)
            log.info("corpus %s: %d new, %d changed, %d unchanged documents", corpus, ingested.documents_new,
                     ingested.documents_changed, ingested.documents_unchanged)
        store.check_meta(settings.embedding.model, embedder.dimension)
        if any(STRATEGIES.get(name).reads_link_contexts for name in config.strategies):
            from neoweave.ingest.link_contexts import embed_all_link_contexts

            embedded = embed_all_link_contexts(store, embedder, progress=progress)  # before timing: queries read
            if embedded:
                log.info("embedded the context of %d links before timing", embedded)
        if config.answer or any(STRATEGIES.get(name).wants_llm(config.parameters.get(name))
                                 for name in config.strategies):
            from neoweave.llm import create_gateway

            llm = create_gateway(settings)
        judge = None
        if config.judge:
            from neoweave.eval.judge import Judge
            from neoweave.llm import create_gateway

            judge_settings = settings.judge_settings()
            same = judge_settings.llm == settings.llm
            judge = Judge(llm if same and llm else create_gateway(judge_settings), embedder,
                          answer_model=llm.model if llm else None)
        pids = {"graph_server": store.server_pid(), "llm_server": llm.server_pid if llm else None}
        evaluation = run(store, embedder, questions, config, llm=llm, progress=progress, pids=pids, judge=judge)
        backend = settings.store.backend
    rows = summarize(evaluation)
    setup: dict[str, Any] = {
        "QA set": f"{qa} ({len(questions)} questions" + (f" of type {', '.join(types)}" if types else "")
                  + (f", first {limit}" if limit else "") + ")",
        "corpus": str(corpus) if corpus else None,
        "graph": f"{backend} ({settings.falkordb.graph})" if backend == "falkordb" else backend,
        "embedding model": settings.embedding.model,
        "strategies": ", ".join(config.strategies) + f" at k = {', '.join(map(str, config.ks))}",
        "parameters": config.parameters or None,
        "equal budgets": f"first N chunks for N in {config.ks}; chunks within {config.token_budgets} tokens",
        "answers": (f"{llm.model} via {llm.endpoint}, prompt "
                    + (", ".join(f"{s}: {config.prompt_for(s)}" for s in config.strategies))
                    + f", max_tokens {config.max_tokens or settings.llm.max_tokens}, temperature "
                    f"{settings.llm.temperature}") if llm else "not evaluated (retrieval only)",
        "judge": (f"{evaluation.judge_model} ({', '.join(config.judge)})" if config.judge else None),
        "machine": f"{_cpu_model()}, {os.cpu_count()} cores",
        "neoweave commit": _git_commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }
    report = write_report(out, evaluation, rows, title or f"neoweave eval: {qa.name}", setup=setup)
    return EvalOutcome(evaluation, rows, report, setup)
