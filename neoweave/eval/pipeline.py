"""The parts of one evaluation that are not the run itself: choosing the questions, describing the setup.

`KnowledgeBase.evaluate` puts them together with `runner.run` (it owns the graph, the models and the LLM).
"""

from __future__ import annotations

import logging
import os
import platform
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neoweave.config import Settings
from neoweave.errors import NeoweaveError
from neoweave.eval.runner import EvalRun, Question, RunConfig, load_qa
from neoweave.protocols import LLMClient, TextEmbedder

if TYPE_CHECKING:
    from neoweave.store.base import GraphStore

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


def select_questions(qa: Path, *, types: list[str] | None = None, limit: int | None = None) -> list[Question]:
    """The QA set's questions of `types` (all when None), then the first `limit` of them."""
    questions = load_qa(qa)
    if types:
        known = {q.type for q in questions}
        unknown = sorted(set(types) - known)
        if unknown:
            raise NeoweaveError(f"{qa}: no questions of type {unknown}; its types: {sorted(known)}")
        questions = [q for q in questions if q.type in types]
    return questions[:limit]


def describe_setup(settings: Settings, qa: Path, questions: list[Question], config: RunConfig, evaluation: EvalRun,
                   llm: LLMClient | None, *, corpus: Path | str | None = None, limit: int | None = None,
                   types: list[str] | None = None) -> dict[str, Any]:
    """The report's setup table: what was run, on what, with which models, where and when."""
    backend = settings.store.backend
    return {
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
        "resumed": (f"{len(evaluation.resumed)} of {len(evaluation.records)} records from an earlier run of this "
                    "configuration stopped part way (their latencies are that run's; resource use and questions/s "
                    "measure the rest)") if evaluation.resumed else None,
        "machine": f"{_cpu_model()}, {os.cpu_count()} cores",
        "neoweave commit": _git_commit(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def run_identity(config: RunConfig, questions: list[Question], answer_model: str | None,
                 graph_stamp: str | None) -> dict[str, Any]:
    """What makes two runs the same run for `eval.checkpoint`: the same graph (its write stamp: any write since
    makes another run) and everything that changes a record as the runner writes it (answer scoring, BERTScore
    and the judge run over all records at the end, so their settings are not part of it; nor is `concurrency`)."""
    return {
        "graph": graph_stamp,
        "strategies": config.strategies, "ks": config.ks, "parameters": config.parameters,
        "answer": config.answer, "prompts": {name: config.prompt_for(name) for name in config.strategies},
        "max_tokens": config.max_tokens, "cite": config.cite, "token_budgets": config.token_budgets,
        "contexts": config.context_bertscore or bool(config.answer and config.judge),
        "answer_model": answer_model if config.answer else None,
        "questions": [[q.id, q.question, q.answer, q.evidence] for q in questions],
    }


def evaluate_graph(settings: Settings, store: GraphStore, embedder: TextEmbedder, qa: Path,
                   questions: list[Question], config: RunConfig, out: str | Path, *,
                   llm: Callable[[], LLMClient], judge_llm: Callable[[], LLMClient],
                   make_strategy: Callable[..., Any], corpus: str | Path | None = None, limit: int | None = None,
                   types: list[str] | None = None, title: str | None = None, progress: bool = True,
                   resume: bool = True) -> EvalOutcome:
    """Run `config` (strategies x k, answers, judge) over the `questions` selected from the QA set `qa` on a graph
    and write the report to `out` (`KnowledgeBase.evaluate`). `llm` and `judge_llm` are called only when the run
    needs a model. Records are kept in `out` as they finish (`eval.checkpoint`); with `resume`, those of an
    earlier run of the same configuration stopped part way are taken up, not evaluated again."""
    from neoweave.eval.checkpoint import Checkpoint
    from neoweave.eval.report import write_report
    from neoweave.eval.runner import run, summarize
    from neoweave.registry import STRATEGIES

    out = Path(out)
    wants_llm = config.answer or any(STRATEGIES.get(name).wants_llm(config.parameters.get(name))
                                     for name in config.strategies)
    model = llm() if wants_llm else None
    judge = None
    if config.judge:
        from neoweave.eval.judge import Judge

        judge = Judge(judge_llm(), embedder, answer_model=model.model if model else None)
    pids = {"graph_server": store.server_pid(), "llm_server": model.server_pid if model else None}
    identity = run_identity(config, questions, model.model if model else None, store.stamp())
    checkpoint = Checkpoint(out, identity, resume=resume)
    evaluation = run(store, embedder, questions, config, llm=model, progress=progress, pids=pids, judge=judge,
                     make_strategy=make_strategy, checkpoint=checkpoint)
    rows = summarize(evaluation)
    setup = describe_setup(settings, qa, questions, config, evaluation, model, corpus=corpus, limit=limit,
                           types=types)
    report = write_report(out, evaluation, rows, title or f"neoweave eval: {qa.name}", setup=setup)
    checkpoint.remove()
    return EvalOutcome(evaluation, rows, report, setup)
