"""Two evaluation runs side by side: per metric and question type, the paired difference with a bootstrap
95% confidence interval, and the questions whose outcome flipped (`neoweave eval compare RUN_A RUN_B`).

A run is a report directory (`neoweave eval --out DIR`: records.json). Records pair by question id within a
(strategy, k); `a_strategy` / `b_strategy` compare two strategies instead (the same run may be given twice).
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.analysis import bootstrap_ci
from neoweave.eval.run_files import records_path, summary_path
from neoweave.eval.similarity import BertScoreModel

DEFAULT_METRICS = ("hit", "perfect", "recall", "mrr", "precision", "answer_in_context", "exact_match", "f1",
                   "accuracy", "rouge_l", "bertscore", "context_tokens", "total_ms")
BERTSCORE_METRICS = ("bertscore", "context_bertscore")
FLIP_METRICS = ("hit", "perfect", "answer_in_context", "exact_match", "accuracy")


@dataclass
class Comparison:
    a: str
    b: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    flipped: list[dict[str, Any]] = field(default_factory=list)
    unpaired: int = 0
    """Questions present in one run only (left out of every difference)."""
    bertscore_models: tuple[str | None, str | None] = (None, None)
    """What each run's BERTScore ran on (its summary.json), named under any table that shows BERTScore."""

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a, "b": self.b, "rows": self.rows, "flipped": self.flipped, "unpaired": self.unpaired,
                "bertscore_models": list(self.bertscore_models)}


def load_records(run: Path) -> list[dict[str, Any]]:
    path = records_path(run)
    if not path.is_file():
        raise NeoweaveError(f"no evaluation records at {path}", hint="give a report directory written by "
                            "`neoweave eval --out DIR`")
    try:
        records = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise NeoweaveError(f"cannot read {path}: {exc}") from exc
    if not isinstance(records, list) or not all(isinstance(r, dict) and "question_id" in r for r in records):
        raise NeoweaveError(f"{path} is not a list of evaluation records")
    for record in records:  # before llm_cached_calls was counted, "llm_cached" meant the answer call's cache hit
        if "llm_cached" in record:
            record.setdefault("answer_cached", record.pop("llm_cached"))
    return records


def load_bertscore_model(run: Path) -> str | None:
    """The BERTScore model a report directory's summary names; None when it names none (no summary, or a run
    without BERTScore)."""
    path = summary_path(run)
    if not path.is_file():
        return None
    try:
        model = json.loads(path.read_text(encoding="utf-8")).get("bertscore_model")
    except (OSError, json.JSONDecodeError, AttributeError):
        return None
    return str(model) if model else None


def load_runs(runs: list[Path]) -> list[dict[str, Any]]:
    """The records of several runs as one list (strategies evaluated in separate runs, say); a strategy at one
    k may come from one run only, so no question is counted twice."""
    records: list[dict[str, Any]] = []
    owner: dict[tuple[str, str, int], Path] = {}
    for run in runs:
        these = load_records(run)
        for key in {(str(r.get("strategy")), str(r.get("profile", "neoweave")), int(r.get("k", 0))) for r in these}:
            if key in owner:
                profile = "" if key[1] == "neoweave" else f" (profile {key[1]})"
                raise NeoweaveError(f"{key[0]}{profile} at k = {key[2]} is in both {owner[key]} and {run}",
                                    hint="give each strategy at each k from one run only")
            owner[key] = run
        records.extend(these)
    return records


def compare_runs(a_records: list[dict[str, Any]], b_records: list[dict[str, Any]], *, a_name: str = "A",
                 b_name: str = "B", a_strategy: str | None = None, b_strategy: str | None = None,
                 metrics: tuple[str, ...] = DEFAULT_METRICS, iterations: int = 2000, seed: int = 0) -> Comparison:
    """B minus A per (strategy pair, k, question type, metric), on the questions both answered."""
    if (a_strategy is None) != (b_strategy is None):
        raise NeoweaveError("give both strategies to compare two strategies, or neither")

    def index(records: list[dict[str, Any]], only: str | None) -> dict[tuple[str, int], dict[str, dict]]:
        grouped: dict[tuple[str, int], dict[str, dict]] = {}
        for record in records:
            if only is None or record["strategy"] == only:
                key = ("*" if only else record["strategy"], int(record["k"]))
                grouped.setdefault(key, {})[str(record["question_id"])] = record
        return grouped

    left, right = index(a_records, a_strategy), index(b_records, b_strategy)
    common = sorted(set(left) & set(right))
    if not common:
        raise NeoweaveError("the runs share no (strategy, k) to compare",
                            hint=f"A has {sorted(left)}, B has {sorted(right)}; --a-strategy/--b-strategy pair two")
    comparison = Comparison(a_name, b_name)
    for key in common:
        ids = sorted(set(left[key]) & set(right[key]))
        comparison.unpaired += len(set(left[key]) ^ set(right[key]))
        label_a = a_strategy or key[0]
        label_b = b_strategy or key[0]
        types = ["all", *sorted({left[key][q].get("type", "all") for q in ids} - {"all"})]
        for qtype in types:
            chosen = [q for q in ids if qtype == "all" or left[key][q].get("type") == qtype]
            for metric in metrics:
                pairs = [(left[key][q][metric], right[key][q][metric]) for q in chosen
                         if metric in left[key][q] and metric in right[key][q]]
                if not pairs:
                    continue
                diffs = [float(b) - float(a) for a, b in pairs]
                low, high = bootstrap_ci(diffs, iterations=iterations, seed=seed)
                comparison.rows.append({
                    "a_strategy": label_a, "b_strategy": label_b, "k": key[1], "type": qtype, "metric": metric,
                    "n": len(pairs), "a": statistics.fmean(float(a) for a, _ in pairs),
                    "b": statistics.fmean(float(b) for _, b in pairs), "diff": statistics.fmean(diffs),
                    "ci_low": low, "ci_high": high, "significant": low > 0 or high < 0})
        for q in ids:
            for metric in FLIP_METRICS:
                before, after = left[key][q].get(metric), right[key][q].get(metric)
                if before is not None and after is not None and float(before) != float(after):
                    comparison.flipped.append({
                        "question_id": q, "question": left[key][q].get("question", ""), "k": key[1],
                        "a_strategy": label_a, "b_strategy": label_b, "metric": metric,
                        "a": before, "b": after, "direction": "gained" if float(after) > float(before) else "lost"})
    return comparison


def comparison_markdown(comparison: Comparison, *, max_flipped: int = 50) -> str:
    lines = [f"# {comparison.b} against {comparison.a}", "",
             "diff = B - A on the questions both runs answered; 95% CI from a paired bootstrap over questions "
             "(2000 resamples); * = the interval excludes 0.", ""]
    if comparison.unpaired:
        lines += [f"{comparison.unpaired} question(s) appear in one run only and are left out.", ""]
    lines += ["| A | B | k | type | metric | n | A | B | diff | 95% CI |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for row in comparison.rows:
        digits = 0 if row["metric"] in ("context_tokens", "total_ms") else 3
        mark = " *" if row["significant"] else ""
        lines.append(f"| {row['a_strategy']} | {row['b_strategy']} | {row['k']} | {row['type']} | {row['metric']} | "
                     f"{row['n']} | {row['a']:.{digits}f} | {row['b']:.{digits}f} | {row['diff']:+.{digits}f}{mark} | "
                     f"[{row['ci_low']:+.{digits}f}, {row['ci_high']:+.{digits}f}] |")
    if any(row["metric"].startswith(BERTSCORE_METRICS) for row in comparison.rows):
        a_model, b_model = (model or f"not recorded (neoweave's default: {BertScoreModel().describe()})"
                            for model in comparison.bertscore_models)
        where = f"on both runs: {a_model}" if a_model == b_model else f"on A: {a_model}; on B: {b_model}"
        lines += ["", f"BERTScore {where}. It compares runs scored alike, not with published BERTScore "
                  "(roberta-large, rescaled)."]
    if comparison.flipped:
        gained = sum(f["direction"] == "gained" for f in comparison.flipped)
        lines += ["", f"## Flipped questions ({gained} gained, {len(comparison.flipped) - gained} lost in B)", "",
                  "| question | k | metric | A | B |", "| --- | --- | --- | --- | --- |"]
        for flip in comparison.flipped[:max_flipped]:
            text = flip["question"].replace("|", "\\|")[:100]
            lines.append(f"| {text} | {flip['k']} | {flip['metric']} | {flip['a']} | {flip['b']} |")
        if len(comparison.flipped) > max_flipped:
            lines.append(f"\n... and {len(comparison.flipped) - max_flipped} more (--json lists them all)")
    return "\n".join(lines) + "\n"
