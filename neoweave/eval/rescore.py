"""Rescore an earlier run with the measures that need neither a model nor a judge (the seed papers' lexical
and counting formulas, `neoweave.eval.paper_measures`), from what its records kept: each answer, its reference,
its question and answer similarity; with the QA file, each retrieved chunk's evidence key against the gold
evidence. Runs made before a formula changed then compare with new ones without answering again."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval import measures
from neoweave.eval.compare import load_records
from neoweave.eval.paper_measures import khl_scores
from neoweave.eval.paper_tables import load_summary
from neoweave.eval.run_files import records_path, summary_path

RESCORED = ("khl_c_rec", "khl_a_corr", "khl_a_rel", "doc_precision")


def rescore_records(records: list[dict[str, Any]], evidence: dict[str, list[str]] | None = None) -> int:
    """Recompute the rescorable measures in place; returns how many records changed. `evidence`: question id ->
    gold evidence keys (from the QA file), for Orion's precision@k."""
    changed = 0
    for record in records:
        before = {key: record.get(key) for key in RESCORED}
        if "answer" in record and "answer_similarity" in record:
            record.update(khl_scores(str(record["answer"]), str(record.get("gold") or ""),
                                     str(record.get("question") or ""), float(record["answer_similarity"])))
        gold = (evidence or {}).get(str(record["question_id"]))
        if gold is not None and "doc_precision" in record:
            keys = [str(item.get("evidence")) for item in record.get("retrieved") or []]
            record["doc_precision"] = measures.document_precision(keys, gold, int(record.get("k") or 0) or None)
        changed += any(record.get(key) != value for key, value in before.items())
    return changed


def rescore_rows(rows: list[dict[str, Any]], records: list[dict[str, Any]]) -> None:
    """The summary rows' means of the rescored measures, recomputed per (strategy, k, question type)."""
    for row in rows:
        group = [r for r in records if r.get("strategy") == row["strategy"] and r.get("k") == row["k"]
                 and row["type"] in ("all", r.get("type", "all"))]
        for key in RESCORED:
            values = [r[key] for r in group if key in r]
            if values:
                row[key] = statistics.fmean(values)


def rescore_run(run: Path, evidence: dict[str, list[str]] | None = None) -> int:
    """Rescore a report directory (records.json and summary.json rewritten; report.md is left as written:
    `neoweave eval tables RUN` prints the seed papers' tables from the new numbers). Returns the records changed."""
    if not run.is_dir():
        raise NeoweaveError(f"not a report directory: {run}", hint="give a directory written by `neoweave eval "
                            "--out DIR`")
    records = load_records(run)
    summary = load_summary(run)
    changed = rescore_records(records, evidence)
    rescore_rows(summary["rows"], records)
    files = {records_path(run): records, summary_path(run): summary}
    try:  # both written aside first, then swapped in: a failure leaves the run as it was
        for path, data in files.items():
            path.with_suffix(".json.tmp").write_text(json.dumps(data, indent=1, default=str), encoding="utf-8")
        for path in files:
            os.replace(path.with_suffix(".json.tmp"), path)
    except OSError as exc:
        for path in files:
            path.with_suffix(".json.tmp").unlink(missing_ok=True)
        raise NeoweaveError(f"cannot rewrite {run}: {exc.strerror}") from exc
    return changed
