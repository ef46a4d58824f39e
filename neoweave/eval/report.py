"""The evaluation report: report.md (setup, side-by-side tables, per question type, equal-budget tables, answer
analysis, the seed papers' tables, latency per stage, memory and CPU), summary.json, records.json and plot.png."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neoweave.eval.analysis import answer_analysis, summarize_budgets
from neoweave.eval.paper_tables import paper_tables_markdown
from neoweave.eval.run_files import RECORDS_FILE, SUMMARY_FILE

if TYPE_CHECKING:
    from neoweave.eval.runner import EvalRun

_QUALITY = ("hit", "perfect", "recall", "mrr", "precision", "doc_hit", "doc_precision", "answer_in_context",
            "exact_match", "f1", "accuracy", "rouge_l", "bertscore", "bertscore_p", "bertscore_r", "answer_similarity",
            "insufficient", "cites", "citation_supported", "citation_precision", "citation_recall",
            "model_citation_precision", "model_citation_recall",
            "faithfulness", "answer_relevance", "context_recall", "context_precision",
            "answer_correctness", "context_precision_without_reference", "context_relevancy", "context_bertscore_f1")
_COUNTS = ("chunks", "context_tokens", "llm_calls", "llm_cached_calls", "llm_tokens", "answer_cached", "cost_usd",
           "p50_ms", "p95_ms")


_LLM_COLUMNS = ("llm_calls", "llm_cached_calls", "llm_tokens", "answer_cached")


def _cell(column: str, value: Any) -> str:
    if isinstance(value, float):
        if column in _QUALITY:
            return f"{value:.3f}"
        if column in ("llm_calls", "llm_cached_calls", "answer_cached"):
            return f"{value:.2f}"
        if column == "cost_usd":
            return f"{value:.5f}"
        if column in ("wall_s", "questions_per_s") or column.endswith("_cpu_s"):
            return f"{value:.1f}"
        return f"{value:.0f}"
    return str(value)


def markdown_table(rows: list[dict[str, Any]], columns: tuple[str, ...] | None = None) -> str:
    columns = columns or ("strategy", "profile", "k", "type", "questions", *_QUALITY, *_COUNTS)
    present = [c for c in columns if any(c in row for row in rows)
               and (c not in _LLM_COLUMNS or any(row.get(c) for row in rows))  # no LLM columns for retrieval
               and (c != "profile" or any(row.get(c, "neoweave") != "neoweave" for row in rows))]
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


def statement_table(rows: list[dict[str, Any]]) -> str:
    """Milliseconds per named statement (all its calls in one question, round trip included), one line per
    (strategy, k, statement): which statement a strategy's graph time goes to."""
    lines = ["| strategy | k | statement | questions | p50 ms | p95 ms |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        if row["type"] != "all":
            continue
        for name, values in row.get("statement_ms", {}).items():
            lines.append(f"| {row['strategy']} | {row['k']} | {name} | {values['questions']} | {values['p50']:.1f} "
                         f"| {values['p95']:.1f} |")
    return "\n".join(lines)


def resource_table(rows: list[dict[str, Any]]) -> str:
    all_rows = [r for r in rows if r["type"] == "all" and "wall_s" in r]
    columns = ["strategy", "k", "questions", "wall_s", "questions_per_s", "cpu_percent"]
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
    if evaluation.judge_warning:
        parts += ["", f"**Judge warning**: {evaluation.judge_warning}."]
    if evaluation.prompt_warning:
        parts += ["", f"**Prompt warning**: {evaluation.prompt_warning}."]
    parts += ["", "## All questions", "", markdown_table(overall)]
    uneven = _uneven_context(overall)
    if uneven:
        parts += ["", uneven]
    if by_type:
        parts += ["", "## Per question type", "", markdown_table(by_type)]
    budgets = summarize_budgets(evaluation.records)
    if budgets:
        parts += ["", "## Equal budget", "",
                  "The measures on the first N chunks each strategy ranked (chunks:N, N from the k list) and on "
                  "the chunks that fit N context tokens (tokens:N); `chunks` is how many were counted.", "",
                  markdown_table(budgets, ("budget", "strategy", "k", "questions", "hit", "perfect", "recall",
                                           "mrr", "precision", "doc_hit", "doc_precision", "chunks"))]
    analysis = answer_analysis(evaluation.records)
    if analysis:
        parts += ["", "## Answer analysis (LARAG's measures)", "", analysis_table(analysis)]
    papers = paper_tables_markdown(rows, evaluation.records, bertscore_model=evaluation.bertscore_model)
    if papers:
        parts += ["", papers]
    if plot is not None:
        parts += ["", f"![quality against context tokens]({plot.name})"]
    parts += ["", "## Latency per stage", "", stage_table(rows)]
    if any(row.get("statement_ms") for row in overall):
        parts += ["", "## Latency per statement", "", statement_table(rows)]
    if any("wall_s" in r for r in overall):
        parts += ["", "## Memory and CPU", "",
                  "Peak RSS (MB) and CPU seconds per process, sampled with psutil every 0.2 s; cpu_percent is "
                  "the mean over the run in percent of one core.", "", resource_table(rows)]
    parts += ["", "Per-question records (retrieved ids, scores, answers, metrics): records.json; the tables as "
              "JSON: summary.json", ""]
    return "\n".join(parts)


def _uneven_context(overall: list[dict[str, Any]]) -> str:
    """A warning when strategies at the same k gave different amounts of context (more context buys recall)."""
    by_k: dict[int, list[dict[str, Any]]] = {}
    for row in overall:
        if "chunks" in row:
            by_k.setdefault(row["k"], []).append(row)
    uneven = []
    for k, group in sorted(by_k.items()):
        sizes = [row["chunks"] for row in group]
        if len(group) > 1 and max(sizes) > min(sizes) * 1.05:
            uneven.append(f"k={k}: " + ", ".join(f"{row['strategy']} {row['chunks']:.1f} chunks / "
                                                 f"{row.get('context_tokens', 0):.0f} tokens" for row in group))
    if not uneven:
        return ""
    return ("**Unequal context**: the strategies returned different amounts of context (" + "; ".join(uneven)
            + "). Compare them on equal budgets (below) before ranking one above another.")


def analysis_table(analysis: list[dict[str, Any]]) -> str:
    """LARAG's correlations of F1 (BERTScore F1 when measured, else token F1: the `F1` column) with lengths,
    tokens and time, and F1 by reference-length bin."""
    lines = ["| strategy | k | questions | F1 | F1 ~ reference length (r / rho) | F1 ~ prediction length | "
             "F1 ~ total tokens (prompt + output)¹ | F1 ~ context tokens | F1 ~ time¹ | F1 by reference length bin |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]

    def pair(row: dict[str, Any], key: str) -> str:
        return " / ".join("n/a" if row.get(f"{kind}_{key}") is None else f"{row[f'{kind}_{key}']:.2f}"
                          for kind in ("pearson", "spearman"))

    for row in analysis:
        bins = ", ".join(f"{b['low']:.0f}-{b['high']:.0f} words: {b['mean']:.2f} (n={b['n']})"
                         for b in row["f1_by_reference_length"])
        measure = {"bertscore": "BERTScore F1", "f1": "token F1"}.get(row.get("measure", "f1"), "token F1")
        lines.append(f"| {row['strategy']} | {row['k']} | {row['questions']} | {measure} | "
                     f"{pair(row, 'reference_length')} | {pair(row, 'prediction_length')} | "
                     f"{pair(row, 'total_tokens')} | {pair(row, 'context_tokens')} | {pair(row, 'ms')} | {bins} |")
    live = ", ".join(f"{row['strategy']} k={row['k']}: {row.get('questions_live', row['questions'])}"
                     for row in analysis)
    lines += ["", f"¹ over the questions whose LLM calls all ran in this run, none taken from the LLM cache ({live})."]
    return "\n".join(lines)


def write_report(out: Path, evaluation: EvalRun, rows: list[dict[str, Any]], title: str, *,
                 setup: dict[str, Any] | None = None, plot: bool = True) -> Path:
    """report.md, summary.json, records.json and (with matplotlib) plot.png in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    (out / RECORDS_FILE).write_text(json.dumps(evaluation.records, indent=1, default=str))
    (out / SUMMARY_FILE).write_text(json.dumps({"title": title, "setup": setup or {},
                                                  "bertscore_model": evaluation.bertscore_model,
                                                  "judge_model": evaluation.judge_model,
                                                  "judge_warning": evaluation.judge_warning,
                                                  "prompt_warning": evaluation.prompt_warning, "rows": rows,
                                                  "budgets": summarize_budgets(evaluation.records),
                                                  "answer_analysis": answer_analysis(evaluation.records)},
                                                 indent=1, default=str))
    plot_path = None
    if plot:
        from neoweave.eval.plot import plot_quality_vs_tokens

        plot_path = plot_quality_vs_tokens(rows, out / "plot.png", title=title)
    report = out / "report.md"
    report.write_text(report_markdown(title, evaluation, rows, setup=setup or {}, plot=plot_path))
    return report
