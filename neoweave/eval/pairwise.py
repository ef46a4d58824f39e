"""Pairwise preference between two strategies' answers (GraphRAG / PankRAG's win rates): every question judged
on each criterion twice, the answers' positions swapped, so a judge's position bias shows as flips."""

from __future__ import annotations

import statistics
from typing import Any

from tqdm import tqdm

from neoweave.errors import NeoweaveError
from neoweave.eval.judge import PAIRWISE_CRITERIA, Judge


def answer_pairs(records: list[dict[str, Any]], a_strategy: str, b_strategy: str, k: int | None,
                 b_records: list[dict[str, Any]] | None = None) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """(A record, B record) per question both answered at the same k (the first k both have, unless given).

    B's answers come from `b_records` when given: another run over the same questions (a strategy evaluated
    on another day, or the same strategy before and after a change)."""
    def answered(rows: list[dict[str, Any]], strategy: str) -> dict[tuple[int, str], dict[str, Any]]:
        return {(int(r["k"]), str(r["question_id"])): r for r in rows
                if r["strategy"] == strategy and "answer" in r}

    left, right = answered(records, a_strategy), answered(records if b_records is None else b_records, b_strategy)
    if not left or not right:
        missing, run = (a_strategy, "the run") if not left else (
            b_strategy, "the run" if b_records is None else "the B run")
        raise NeoweaveError(f"{run} has no answers of strategy '{missing}'", hint="run `neoweave eval --answer` "
                            "with both strategies first")
    ks = sorted({key[0] for key in left} & {key[0] for key in right})
    if not ks:
        raise NeoweaveError(f"'{a_strategy}' and '{b_strategy}' were answered at different k")
    chosen = k if k is not None else ks[0]
    if chosen not in ks:
        raise NeoweaveError(f"no answers of both strategies at k={chosen}; they share k in {ks}")
    keys = sorted(key for key in set(left) & set(right) if key[0] == chosen)
    if not keys:
        raise NeoweaveError(f"no question was answered by both '{a_strategy}' and '{b_strategy}' at k={chosen}",
                            hint="the two runs must share their QA set")
    return [(left[key], right[key]) for key in keys]


def pairwise_win_rates(judge: Judge, pairs: list[tuple[dict[str, Any], dict[str, Any]]], *,
                       criteria: tuple[str, ...] = PAIRWISE_CRITERIA, progress: bool = True) -> dict[str, Any]:
    """Per criterion: A's and B's win rates (a tie counts half), how often the verdict flipped with the order,
    and per question both verdicts with the judge's reasons."""
    unknown = sorted(set(criteria) - set(PAIRWISE_CRITERIA))
    if unknown:
        raise NeoweaveError(f"unknown criteria {unknown}; known: {', '.join(PAIRWISE_CRITERIA)}")
    questions: list[dict[str, Any]] = []
    bar = tqdm(total=len(pairs) * len(criteria), desc="pairwise", unit="pair", disable=not progress)
    for a, b in pairs:
        judged = {}
        for criterion in criteria:
            judged[criterion] = judge.pairwise(a["question"], a["answer"], b["answer"], criterion)
            bar.update(1)
        questions.append({"question_id": a["question_id"], "question": a["question"], "a": a["answer"],
                          "b": b["answer"], "verdicts": judged})
    bar.close()
    rows = []
    for criterion in criteria:
        verdicts = [q["verdicts"][criterion] for q in questions if q["verdicts"][criterion]["a_score"] is not None]
        flips = [v["flipped"] for v in verdicts if v["flipped"] is not None]
        a_rate = statistics.fmean(v["a_score"] for v in verdicts) if verdicts else None
        first = [score for v in verdicts for score in v.get("first_shown_scores", [])]
        rows.append({"criterion": criterion, "judged": len(verdicts), "a_win_rate": a_rate,
                     "b_win_rate": None if a_rate is None else 1 - a_rate,
                     "flip_rate": statistics.fmean(float(f) for f in flips) if flips else None,
                     "first_shown_win_rate": statistics.fmean(first) if first else None})
    return {"judge": judge.model, "judges_itself": judge.judges_itself, "rows": rows, "questions": questions,
            "calls": sum(v["calls"] for q in questions for v in q["verdicts"].values()),
            "tokens": sum(v["tokens"] for q in questions for v in q["verdicts"].values())}


def pairwise_markdown(result: dict[str, Any], a_name: str, b_name: str) -> str:
    lines = [f"# {a_name} against {b_name}: pairwise preference", "",
             f"Judge: {result['judge']}; each question judged twice per criterion with the answers' positions "
             f"swapped (a tie counts half); {result['calls']} calls, {result['tokens']} tokens."]
    if result["judges_itself"]:
        lines += ["", "**Warning**: the judge is the model that answered."]
    lines += ["", f"| criterion | judged | {a_name} wins | {b_name} wins | verdict flipped with order | "
                  "answer shown first wins |", "| --- | --- | --- | --- | --- | --- |"]
    for row in result["rows"]:
        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{100 * value:.0f} %"
        lines.append(f"| {row['criterion']} | {row['judged']} | {pct(row['a_win_rate'])} | "
                     f"{pct(row['b_win_rate'])} | {pct(row['flip_rate'])} | {pct(row.get('first_shown_win_rate'))} |")
    return "\n".join(lines) + "\n"
