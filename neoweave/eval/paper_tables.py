"""The report's "In the seed papers' measures" section: each seed paper's own table, read off the run's rows,
so a user can put neoweave's numbers for every strategy next to the paper's (LARAG, the thesis, Orion-RAG,
KHL-RAG, PankRAG). A table appears when the run measured at least one of its measures; a measure the run did
not produce is named with the option that produces it, never shown as zero."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.run_files import summary_path
from neoweave.eval.similarity import BertScoreModel


@dataclass(frozen=True)
class PaperTable:
    """One seed paper's table: the measures it reports with its own formulas, as (row key, the paper's name)."""

    paper: str
    reports: str
    measures: tuple[tuple[str, str], ...]
    produced_by: str
    """The `neoweave eval` options that produce the measures (named when they are missing)."""
    context: tuple[tuple[str, str], ...] = ()
    """Columns shown beside the measures (cost, time, LLM-judged variants under RAGAS's names), not counted as
    the paper's measures."""
    per_prompt: bool = False
    """The paper compares prompt templates: show each row's prompt."""
    bertscore: bool = False
    """The table reports BERTScore: say on which model."""


_JUDGED = "judged"
PAPER_TABLES: tuple[PaperTable, ...] = (
    PaperTable("LARAG", "BERTScore precision, recall and F1 of the answer per prompt template (000 l. 300-306)",
               (("bertscore_p", "BERTScore P"), ("bertscore_r", "BERTScore R"), ("bertscore", "BERTScore F1")),
               "--answer (and --prompt per strategy)",
               (("f1", "token F1"), ("rouge_l", "ROUGE-L"), ("context_tokens", "context tokens")), per_prompt=True,
               bertscore=True),
    PaperTable("Thesis (retrieval)", "BERTScore of the retrieved context against the ground-truth context (001, "
               "eq. 4.2-4.4) and RAGAS context precision with and without the reference answer, context recall "
               "(l. 1040-1050; judged)",
               (("context_bertscore_p", "BERTScore P"), ("context_bertscore_r", "BERTScore R"),
                ("context_bertscore_f1", "BERTScore F1"),
                ("context_precision", f"context precision with reference ({_JUDGED})"),
                ("context_precision_without_reference", f"context precision without reference ({_JUDGED})"),
                ("context_recall", f"context recall ({_JUDGED})")),
               "--context-bertscore; --answer --judge context_precision,context_precision_without_reference,"
               "context_recall", bertscore=True),
    PaperTable("Orion-RAG", "hit rate and precision@k = |Retrieved_k & G_q| / k with document-level ground truth "
               "(002 l. 188), runtime",
               (("doc_hit", "hit rate (document)"), ("doc_precision", "precision@k (document)")), "",
               (("p50_ms", "p50 ms"), ("wall_s", "wall s"), ("questions_per_s", "questions/s"))),
    PaperTable("KHL-RAG", "C-Rec, A-Sim, A-Corr (alpha = 0.5) and A-Rel as its appendix defines them (003 eq. "
               "12-17: token sets and embedding cosine, no judge); RAGAS's judged measures beside them",
               (("khl_c_rec", "C-Rec"), ("answer_similarity", "A-Sim"), ("khl_a_corr", "A-Corr"),
                ("khl_a_rel", "A-Rel")), "--answer",
               (("context_recall", f"RAGAS context recall ({_JUDGED})"),
                ("answer_correctness", f"RAGAS answer correctness ({_JUDGED})"),
                ("answer_relevance", f"RAGAS answer relevancy ({_JUDGED})"), ("llm_tokens", "LLM tokens"))),
    PaperTable("PankRAG", "answer relevance (eq. 6), faithfulness (eq. 7), context recall as the share of relevant "
               "context sentences (eq. 8, RAGAS's context relevancy) and context precision, all judged by an LLM",
               (("answer_relevance", f"answer relevance ({_JUDGED})"), ("faithfulness", f"faithfulness ({_JUDGED})"),
                ("context_relevancy", f"context recall, eq. 8 ({_JUDGED})"),
                ("context_precision", f"context precision ({_JUDGED})")),
               "--answer --judge answer_relevance,faithfulness,context_relevancy,context_precision",
               (("llm_calls", "LLM calls"),)),
)


def strategy_label(row: dict[str, Any]) -> str:
    """A row's strategy as the tables name it: "larag (as published)" for its paper profile."""
    return f"{row['strategy']} (as published)" if row.get("profile") == "paper" else str(row["strategy"])


def _prompts(records: list[dict[str, Any]]) -> dict[tuple[str, int], str]:
    return {(r["strategy"], r["k"]): r["prompt"] for r in records if r.get("prompt")}


_WHOLE = ("p50_ms", "context_tokens", "llm_tokens")
_ONE_DECIMAL = ("wall_s", "questions_per_s", "llm_calls")


def _cell(key: str, value: Any) -> str:
    if not isinstance(value, float | int) or isinstance(value, bool) or key == "k":
        return str(value)
    if key in _WHOLE:
        return f"{value:.0f}"
    if key in _ONE_DECIMAL:
        return f"{value:.1f}" if value >= 1 or key != "questions_per_s" else f"{value:.3f}"  # answers: < 1/s
    return f"{value:.3f}"


def _table(table: PaperTable, overall: list[dict[str, Any]], prompts: dict[tuple[str, int], str],
           bertscore_model: str | None) -> str:
    columns = [("strategy", "strategy"), ("k", "k")]
    if table.per_prompt and prompts:
        columns.append(("prompt", "prompt"))
    columns += [(key, title) for key, title in table.measures + table.context
                if any(key in row for row in overall)]
    about = [f"What it reports: {table.reports}."]
    if table.bertscore and any(key.startswith(("bertscore", "context_bertscore")) for key, _ in columns):
        about.append(f"BERTScore here: {bertscore_model or BertScoreModel().describe()}"
                     " (the papers': roberta-large layer 17; give it with --bertscore-model DIR --bertscore-layer 17)"
                     ".")
    lines = [f"### {table.paper}", "", " ".join(about), "",
             "| " + " | ".join(title for _, title in columns) + " |",
             "| " + " | ".join("---" for _ in columns) + " |"]
    for row in overall:
        values = {**row, "strategy": strategy_label(row), "prompt": prompts.get((row["strategy"], row["k"]), "")}
        lines.append("| " + " | ".join(_cell(key, values.get(key, "")) for key, _ in columns) + " |")
    missing = [title for key, title in table.measures if not any(key in row for row in overall)]
    if missing:
        lines += ["", f"Not measured in this run: {', '.join(missing)} (`neoweave eval {table.produced_by}`)."]
    return "\n".join(lines)


def _thesis_table(rows: list[dict[str, Any]]) -> str:
    """The thesis's short-answer accuracy, one column per question type, with its decline rate and cost."""
    types = sorted({r["type"] for r in rows if r["type"] != "all" and "accuracy" in r})
    header = ["strategy", "k", "accuracy (all)", *(f"accuracy ({t})" for t in types), "Insufficient rate",
              "LLM tokens", "$ / question"]
    lines = ["### Thesis (multi-hop RAG on MultiHop-RAG)", "",
             "What it reports: short-answer accuracy per question type; a null question is right only when the "
             "answer is \"Insufficient Information\".", "",
             "| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    by_key = {(r["strategy"], r.get("profile"), r["k"], r["type"]): r for r in rows}
    for row in (r for r in rows if r["type"] == "all" and "accuracy" in r):
        cells = [strategy_label(row), str(row["k"]), f"{row['accuracy']:.3f}"]
        for kind in types:
            typed = by_key.get((row["strategy"], row.get("profile"), row["k"], kind))
            cells.append(f"{typed['accuracy']:.3f} (n={typed['questions']})" if typed else "")
        cells += [f"{row.get('insufficient', 0.0):.3f}", f"{row.get('llm_tokens', 0.0):.0f}",
                  f"{row.get('cost_usd', 0.0):.5f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paper_tables_markdown(rows: list[dict[str, Any]], records: list[dict[str, Any]], *,
                          several_runs: bool = False, bertscore_model: str | None = None) -> str:
    """The section, or "" when the run measured nothing any seed paper reports (`several_runs`: the rows
    were merged from several report directories, and the intro says so; `bertscore_model`: what BERTScore ran
    on, said under every table that reports it)."""
    overall = [r for r in rows if r["type"] == "all"]
    prompts = _prompts(records)
    parts = []
    for table in PAPER_TABLES:
        if any(key in row for row in overall for key, _ in table.measures):
            parts.append(_table(table, overall, prompts, bertscore_model))
        if table.paper == "LARAG" and any("accuracy" in row for row in overall):
            parts.append(_thesis_table(rows))  # the papers in the order the README lists them
    if not parts:
        return ""
    whose = "these runs'" if several_runs else "this run's"
    return "\n\n".join(["## In the seed papers' measures",
                        f"Each seed paper's table with {whose} numbers for every strategy evaluated (means over "
                        "the questions; LARAG's correlations are under \"Answer analysis\", PankRAG's pairwise "
                        "win rates come from `neoweave eval pairwise`). A column marked judged is scored by an "
                        "LLM (RAGAS-style), under RAGAS's name when the paper defines its measure otherwise.",
                        *parts])


def load_summary(run: Path) -> dict[str, Any]:
    """The summary a `neoweave eval --out RUN` wrote (RUN/summary.json, or the one beside a file of RUN), its rows
    checked."""
    path = summary_path(run)
    if not path.is_file():
        raise NeoweaveError(f"no evaluation summary at {path}", hint="give a report directory written by "
                            "`neoweave eval --out DIR`")
    try:
        summary = json.loads(path.read_text(encoding="utf-8"))
        rows = summary.get("rows")
    except (OSError, json.JSONDecodeError, AttributeError) as exc:
        raise NeoweaveError(f"cannot read {path}: {exc}") from exc
    if not isinstance(rows, list) or not all(isinstance(r, dict) and {"strategy", "k", "type"} <= r.keys()
                                             for r in rows):
        raise NeoweaveError(f"{path} has no list of summary rows (strategy, k, type)")
    return summary


def load_summary_rows(run: Path) -> list[dict[str, Any]]:
    """The summary rows of a run (`load_summary`)."""
    return load_summary(run)["rows"]


def tables_from_runs(runs: list[Path], k: int | None = None) -> str:
    """The seed papers' tables over several runs, for strategies evaluated one run each (slow judged runs are
    taken strategy by strategy); a strategy at one k must come from one run only. `k` keeps one k."""
    from neoweave.eval.compare import load_runs

    records = load_runs(runs)
    summaries = [load_summary(run) for run in runs]
    rows = [row for summary in summaries for row in summary["rows"]]
    if k is not None:
        rows = [row for row in rows if row["k"] == k]
        records = [record for record in records if record.get("k") == k]
        if not rows:
            raise NeoweaveError(f"no strategy was evaluated at k = {k} in {', '.join(map(str, runs))}",
                                hint="leave out --k, or give one of the run's k values")
    models = sorted({str(summary["bertscore_model"]) for summary in summaries if summary.get("bertscore_model")})
    text = paper_tables_markdown(rows, records, several_runs=len(runs) > 1,
                                 bertscore_model="; ".join(models) or None)
    if not text:
        raise NeoweaveError(f"{', '.join(map(str, runs))} measured nothing a seed paper reports",
                            hint="run `neoweave eval ... --answer --judge all`")
    return text
