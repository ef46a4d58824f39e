"""Run strategies over a QA set and aggregate retrieval (and optionally answer) metrics side by side.

QA format (canonical, see the data README): {"id", "question", "answer", "aliases", "evidence", "type"}.
Evidence names document titles (record corpora) or section URLs (documentation); a retrieved chunk counts
when its document title, or its section URL, is in the evidence.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from neoweave.embeddings import Embedder
from neoweave.errors import NeoweaveError
from neoweave.eval import metrics
from neoweave.eval.resources import ResourceMonitor, ResourceUsage
from neoweave.eval.similarity import BertScoreModel, bert_scores, rouge_l
from neoweave.query import strategy as make_strategy
from neoweave.registry import STRATEGIES
from neoweave.store.base import GraphStore


@dataclass
class Question:
    id: str
    question: str
    answer: str
    aliases: list[str]
    evidence: list[str]
    type: str = "all"


def load_qa(path: str | Path) -> list[Question]:
    path = Path(path)
    if not path.is_file():
        raise NeoweaveError(f"QA file not found: {path}")
    questions = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            questions.append(Question(str(row["id"]), row["question"], row.get("answer", ""),
                                      list(row.get("aliases") or []), list(row["evidence"]),
                                      row.get("type") or "all"))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise NeoweaveError(f"{path}:{number}: not a QA record ({exc})",
                                hint='expected {"id", "question", "answer", "evidence": [...]}') from exc
    if not questions:
        raise NeoweaveError(f"{path}: no questions")
    return questions


@dataclass
class RunConfig:
    strategies: list[str]
    ks: list[int]
    answer: bool = False
    prompt: str = "short_answer"
    prompts: dict[str, str] = field(default_factory=dict)  # per-strategy prompt, overriding `prompt`
    max_tokens: int | None = None  # answer length cap (None: the gateway's llm.max_tokens)
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-strategy overrides
    bertscore: BertScoreModel | None = field(default_factory=BertScoreModel)  # None: skip BERTScore

    def prompt_for(self, strategy: str) -> str:
        return self.prompts.get(strategy, self.prompt)


@dataclass
class EvalRun:
    """Everything one evaluation produced: per-question records and per (strategy, k) resource use."""

    records: list[dict[str, Any]]
    resources: dict[tuple[str, int], ResourceUsage] = field(default_factory=dict)
    bertscore_model: str | None = None


def _evidence_keys(store: GraphStore, items: list[Any], by_url: bool, titles: dict[str, str]) -> list[str]:
    if by_url:
        return [item.url for item in items]
    missing = sorted({item.doc_id for item in items} - set(titles))
    if missing:
        titles.update({r["id"]: r["title"] for r in store.run("document_titles", {"ids": missing})})
    return [titles.get(item.doc_id, item.doc_id) for item in items]


def _score_answers(records: list[dict[str, Any]], questions: dict[str, Question], model: BertScoreModel | None) -> None:
    """ROUGE-L per record, then BERTScore in one batch (loading the model once)."""
    answered = [r for r in records if "answer" in r]
    for record in answered:
        question = questions[record["question_id"]]
        record["rouge_l"] = rouge_l(record["answer"], [question.answer, *question.aliases])
    if model is not None and answered:
        scores = bert_scores([r["answer"] for r in answered],
                             [[questions[r["question_id"]].answer, *questions[r["question_id"]].aliases]
                              for r in answered], model)
        for record, score in zip(answered, scores, strict=True):
            record["bertscore"] = score


def run(store: GraphStore, embedder: Embedder, questions: list[Question], config: RunConfig, *, llm=None,
        progress: bool = True, pids: dict[str, int | None] | None = None) -> EvalRun:
    """One record per (strategy, k, question): retrieved ids and scores, metrics, cost, answer.

    `pids` names helper processes (graph server, model server) whose memory and CPU are measured with ours.
    """
    if llm is None and (config.answer or any(STRATEGIES.get(name).wants_llm(config.parameters.get(name))
                                             for name in config.strategies)):
        raise NeoweaveError("answer evaluation needs an LLM gateway (llm=...), as do strategies that call the LLM "
                            "to retrieve")
    by_url = any("://" in e or "#" in e for q in questions for e in q.evidence)
    titles: dict[str, str] = {}
    records: list[dict[str, Any]] = []
    resources: dict[tuple[str, int], ResourceUsage] = {}
    total = len(config.strategies) * len(config.ks) * len(questions)
    bar = tqdm(total=total, desc="evaluating", unit="q", disable=not progress)
    for name in config.strategies:
        for k in config.ks:
            strategy = make_strategy(name, store, embedder, llm, k=k, **config.parameters.get(name, {}))
            with ResourceMonitor(pids) as monitor:
                for question in questions:
                    records.append(_evaluate_one(store, strategy, k, question, config, llm, by_url, titles))
                    bar.update(1)
            resources[(name, k)] = monitor.usage
    bar.close()
    if config.answer:
        _score_answers(records, {q.id: q for q in questions}, config.bertscore)
    return EvalRun(records, resources, config.bertscore.describe() if config.answer and config.bertscore else None)


def _evaluate_one(store: GraphStore, strategy, k: int, question: Question, config: RunConfig, llm, by_url: bool,
                  titles: dict[str, str]) -> dict[str, Any]:
    record: dict[str, Any] = {"strategy": strategy.name, "k": k, "question_id": question.id,
                              "type": question.type, "question": question.question}
    if config.answer:
        from neoweave.query.answer import answer

        answered = answer(question.question, strategy=strategy, llm=llm, prompt=config.prompt_for(strategy.name),
                          max_tokens=config.max_tokens)
        result = answered.retrieval
        golds = [question.answer, *question.aliases]
        record.update(answer=answered.answer, gold=question.answer,
                      exact_match=metrics.exact_match(answered.answer, golds),
                      f1=metrics.token_f1(answered.answer, golds),
                      insufficient=metrics.is_insufficient(answered.answer),
                      llm_cached=float(answered.call.cached) if answered.call else 0.0)
    else:
        result = strategy.retrieve(question.question)
    keys = _evidence_keys(store, result.items, by_url, titles)
    if strategy.returns_passages:  # global search's key points are no passages: no evidence metrics, not zeros
        record.update(hit=metrics.hit(keys, question.evidence), perfect=metrics.perfect(keys, question.evidence),
                      recall=metrics.evidence_recall(keys, question.evidence),
                      mrr=metrics.reciprocal_rank(keys, question.evidence))
    record.update(
        retrieved=[{"chunk_id": i.chunk_id, "evidence": key, "score": i.score, "origin": i.origin}
                   for i, key in zip(result.items, keys, strict=True)],
        chunks=len(result.items), context_tokens=result.context_tokens,
        ms=dict(result.cost.milliseconds), total_ms=result.cost.total_ms,
        llm_calls=result.cost.llm_calls,
        llm_tokens=result.cost.prompt_tokens + result.cost.completion_tokens + result.cost.cached_tokens)
    return record


_MEAN_FIELDS = ("hit", "perfect", "recall", "mrr", "chunks", "context_tokens", "llm_calls", "llm_tokens",
                "llm_cached", "exact_match", "f1", "rouge_l", "bertscore", "insufficient")


def summarize(evaluation: EvalRun) -> list[dict[str, Any]]:
    """Means per (strategy, k, question type) and over all types; latency p50/p95 overall and per stage.

    Resource use (peak RSS, CPU) is measured per (strategy, k), so it appears on the "all" rows only.
    """
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for record in evaluation.records:
        for qtype in ("all", record["type"]) if record["type"] != "all" else ("all",):
            groups.setdefault((record["strategy"], record["k"], qtype), []).append(record)
    rows = []
    for (name, k, qtype), group in sorted(groups.items(), key=lambda item: (item[0][0], item[0][1],
                                                                             item[0][2] != "all", item[0][2])):
        row: dict[str, Any] = {"strategy": name, "k": k, "type": qtype, "questions": len(group)}
        for key in _MEAN_FIELDS:
            values = [r[key] for r in group if key in r]
            if values:
                row[key] = statistics.fmean(values)
        latencies = [r["total_ms"] for r in group]
        row["p50_ms"], row["p95_ms"] = metrics.percentile(latencies, 50), metrics.percentile(latencies, 95)
        stages = sorted({stage for r in group for stage in r["ms"]})
        row["stage_ms"] = {stage: {"p50": metrics.percentile([r["ms"].get(stage, 0.0) for r in group], 50),
                                   "p95": metrics.percentile([r["ms"].get(stage, 0.0) for r in group], 95)}
                           for stage in stages}
        # what the retrieval itself costs: everything but embedding the question and the answer call
        retrieval = [r["total_ms"] - r["ms"].get("embed", 0.0) - r["ms"].get("llm", 0.0) for r in group]
        row["stage_ms"]["retrieval"] = {"p50": metrics.percentile(retrieval, 50),
                                        "p95": metrics.percentile(retrieval, 95)}
        usage = evaluation.resources.get((name, k))
        if usage is not None and qtype == "all":
            row.update(usage.flat())
        rows.append(row)
    return rows


_QUALITY = ("hit", "perfect", "recall", "mrr", "exact_match", "f1", "rouge_l", "bertscore", "insufficient")
_COUNTS = ("chunks", "context_tokens", "llm_calls", "llm_cached", "llm_tokens", "p50_ms", "p95_ms")


_LLM_COLUMNS = ("llm_calls", "llm_cached", "llm_tokens")


def _cell(column: str, value: Any) -> str:
    if isinstance(value, float):
        if column in _QUALITY:
            return f"{value:.3f}"
        if column in ("llm_calls", "llm_cached"):
            return f"{value:.2f}"
        if column == "wall_s" or column.endswith("_cpu_s"):
            return f"{value:.1f}"
        return f"{value:.0f}"
    return str(value)


def markdown_table(rows: list[dict[str, Any]], columns: tuple[str, ...] | None = None) -> str:
    columns = columns or ("strategy", "k", "type", "questions", *_QUALITY, *_COUNTS)
    present = [c for c in columns if any(c in row for row in rows)
               and (c not in _LLM_COLUMNS or any(row.get(c) for row in rows))]  # no LLM columns for retrieval
    lines = ["| " + " | ".join(present) + " |", "| " + " | ".join("---" for _ in present) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(c, row.get(c, "")) for c in present) + " |")
    return "\n".join(lines)


def stage_table(rows: list[dict[str, Any]]) -> str:
    """Latency p50/p95 per stage (ms), one line per (strategy, k)."""
    lines = ["| strategy | k | stage | p50 ms | p95 ms |", "| --- | --- | --- | --- | --- |"]
    for row in rows:
        if row["type"] != "all":
            continue
        for stage, values in row["stage_ms"].items():
            lines.append(f"| {row['strategy']} | {row['k']} | {stage} | {values['p50']:.0f} | {values['p95']:.0f} |")
    return "\n".join(lines)


def resource_table(rows: list[dict[str, Any]]) -> str:
    all_rows = [r for r in rows if r["type"] == "all" and "wall_s" in r]
    columns = ["strategy", "k", "questions", "wall_s", "cpu_percent"]
    columns += sorted({c for r in all_rows for c in r if c.endswith(("_peak_rss_mb", "_cpu_s"))})
    return markdown_table(all_rows, tuple(columns))


def report_markdown(title: str, evaluation: EvalRun, rows: list[dict[str, Any]], *, setup: dict[str, Any],
                    plot: Path | None = None) -> str:
    """The Markdown report: setup, one side-by-side table, per-type breakdown, latency and resources."""
    overall = [r for r in rows if r["type"] == "all"]
    by_type = [r for r in rows if r["type"] != "all"]
    parts = [f"# {title}", ""]
    parts += [f"- {key}: {value}" for key, value in setup.items() if value is not None]
    if evaluation.bertscore_model:
        parts.append(f"- BERTScore: {evaluation.bertscore_model} (compares strategies here; not comparable with "
                     "published roberta-large scores)")
    parts += ["", "## All questions", "", markdown_table(overall)]
    if by_type:
        parts += ["", "## Per question type", "", markdown_table(by_type)]
    if plot is not None:
        parts += ["", f"![quality against context tokens]({plot.name})"]
    parts += ["", "## Latency per stage", "", stage_table(rows)]
    if any("wall_s" in r for r in overall):
        parts += ["", "## Memory and CPU", "",
                  "Peak RSS (MB) and CPU seconds per process, sampled with psutil every 0.2 s; cpu_percent is "
                  "the mean over the run in percent of one core.", "", resource_table(rows)]
    parts += ["", "Per-question records (retrieved ids, scores, answers, metrics): records.json; the tables as "
              "JSON: summary.json", ""]
    return "\n".join(parts)


def write_report(out: Path, evaluation: EvalRun, rows: list[dict[str, Any]], title: str, *,
                 setup: dict[str, Any] | None = None, plot: bool = True) -> Path:
    """report.md, summary.json, records.json and (with matplotlib) plot.png in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / "records.json").write_text(json.dumps(evaluation.records, indent=1, default=str))
    (out / "summary.json").write_text(json.dumps({"title": title, "setup": setup or {},
                                                  "bertscore_model": evaluation.bertscore_model, "rows": rows},
                                                 indent=1, default=str))
    plot_path = None
    if plot:
        from neoweave.eval.plot import plot_quality_vs_tokens

        plot_path = plot_quality_vs_tokens(rows, out / "plot.png", title=title)
    report = out / "report.md"
    report.write_text(report_markdown(title, evaluation, rows, setup=setup or {}, plot=plot_path))
    return report
