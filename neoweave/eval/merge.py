"""One report from several runs over disjoint questions (`neoweave eval merge RUN... --out DIR`).

A long LLM evaluation is run in blocks of questions (a block a session, or one that can stop without losing the
rest); merged, the blocks give the report, the summary rows and each seed paper's table over all their questions,
as one run over the union would, with the same means per question. What a block measured about itself alone
(wall time, memory, questions per second) is not merged; the latency percentiles are recomputed over every
record.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.compare import load_records
from neoweave.eval.paper_tables import load_summary
from neoweave.eval.runner import EvalRun, summarize


def merge_runs(runs: list[Path]) -> tuple[EvalRun, dict[str, Any]]:
    """The records of `runs` as one evaluation, and the setup that says where they came from. A question may
    be in one run only for a given strategy and k, and a strategy at one k must have one profile throughout."""
    if len(runs) < 2:
        raise NeoweaveError("give two or more report directories to merge")
    records: list[dict[str, Any]] = []
    seen: dict[tuple[str, int, str], Path] = {}
    profiles: dict[tuple[str, int], tuple[str, Path]] = {}
    bertscore, judges, commits = set(), set(), set()
    for run in runs:
        summary = load_summary(run)
        for record in load_records(run):
            strategy, k = str(record["strategy"]), int(record["k"])
            key = (strategy, k, str(record["question_id"]))
            if key in seen:
                raise NeoweaveError(f"question {key[2]} of {strategy} at k = {k} is in both {seen[key]} and {run}",
                                    hint="merge runs over disjoint questions (blocks of one QA set)")
            seen[key] = run
            profile = str(record.get("profile", "neoweave"))
            first = profiles.setdefault((strategy, k), (profile, run))
            if first[0] != profile:
                raise NeoweaveError(f"{strategy} at k = {k} has profile {first[0]} in {first[1]} and {profile} in "
                                    f"{run}", hint="merge the runs of each profile apart")
            records.append(record)
        if summary.get("bertscore_model"):
            bertscore.add(str(summary["bertscore_model"]))
        if summary.get("judge_model"):
            judges.add(str(summary["judge_model"]))
        if commit := (summary.get("setup") or {}).get("neoweave commit"):
            commits.add(str(commit))
    setup = {"merged from": ", ".join(map(str, runs)), "questions": len({key[2] for key in seen}),
             "neoweave commits": ", ".join(sorted(commits)) or None,
             "not merged": "wall time, memory and questions/s (each run measured its own)"}
    evaluation = EvalRun(records, {}, "; ".join(sorted(bertscore)) or None, "; ".join(sorted(judges)) or None)
    return evaluation, setup


def write_merged(runs: list[Path], out: Path, title: str | None = None) -> Path:
    """Merge `runs` (`merge_runs`) and write the report to `out` (report.md, summary.json, records.json)."""
    from neoweave.eval.report import write_report

    evaluation, setup = merge_runs(runs)
    return write_report(out, evaluation, summarize(evaluation), title or f"neoweave eval: {len(runs)} runs merged",
                        setup=setup)
