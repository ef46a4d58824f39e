"""The router against every single strategy, fitted and scored on different questions (2-fold cross-validation).

    .venv/bin/python benchmarks/router_cv.py eval-run/ [eval-run-2/ ...] [--k 5] [--out docs/benchmarks/router_cv.json]

Reads the records of `neoweave eval --answer` runs of several strategies (in one run or one run each). For
each fold, the routes are fitted (`fit_routes`: per question class the best exact match, near-ties to fewer
LLM tokens) on the other half of the questions, and each question of this fold is answered by the
strategy its class is routed to (its record in the runs: the router dispatches to that strategy with the same
parameters, and the rules classify deterministically). A fit on all questions is printed too, marked
in-sample. Classes absent from a fitting half keep the default route (or hybrid when the runs hold no record
of it).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.eval.compare import load_runs  # noqa: E402
from neoweave.eval.router_fit import fit_routes  # noqa: E402
from neoweave.query.question_types import classify_rules  # noqa: E402
from neoweave.query.router import DEFAULT_ROUTES  # noqa: E402

FIELDS = ("exact_match", "f1", "context_tokens", "prompt_tokens", "llm_calls", "total_ms")


def summary(records: list[dict]) -> dict[str, float]:
    return {name: statistics.fmean(r.get(name, 0) for r in records) for name in FIELDS} | {"questions": len(records)}


def routed(records_by: dict[tuple[str, str], dict], questions: list[str], routes: dict[str, str],
           available: set[str], texts: dict[str, str]) -> list[dict]:
    chosen = []
    for question_id in questions:
        klass = classify_rules(texts[question_id])
        name = routes.get(klass) or DEFAULT_ROUTES[klass]
        if name not in available:
            name = "hybrid" if "hybrid" in available else sorted(available)[0]
        chosen.append({**records_by[(name, question_id)], "routed_to": name, "class": klass})
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+")
    parser.add_argument("--k", type=int, default=None)
    parser.add_argument("--tolerance", type=float, default=0.02)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    records = [r for r in load_runs(args.runs) if r["strategy"] != "router" and "exact_match" in r]
    k = args.k or min(r["k"] for r in records)
    records = [r for r in records if r["k"] == k]
    strategies = sorted({r["strategy"] for r in records})
    by = {(r["strategy"], r["question_id"]): r for r in records}
    texts = {r["question_id"]: r["question"] for r in records}
    questions = sorted(q for q in texts if all((name, q) in by for name in strategies))
    folds = [questions[0::2], questions[1::2]]
    source = ", ".join(map(str, args.runs))
    result: dict = {"runs": [str(run) for run in args.runs], "k": k, "strategies": {}, "folds": []}
    for name in strategies:
        result["strategies"][name] = summary([by[(name, q)] for q in questions])
    cross: list[dict] = []
    for index, test in enumerate(folds):
        train = folds[1 - index]
        fit = fit_routes([by[(name, q)] for name in strategies for q in train], k=k, tolerance=args.tolerance,
                         source=f"fold {1 - index}")
        answered = routed(by, test, fit.routes, set(strategies), texts)
        cross.extend(answered)
        result["folds"].append({"routes": fit.routes, "test_questions": len(test), **summary(answered)})
    result["router_cross_validated"] = summary(cross)
    result["router_routed_to"] = {name: sum(r["routed_to"] == name for r in cross) for name in strategies}
    full = fit_routes(records, k=k, tolerance=args.tolerance, source=source)
    result["router_in_sample"] = {"routes": full.routes, **summary(routed(by, questions, full.routes,
                                                                           set(strategies), texts))}
    result["evidence"] = full.markdown()
    rows = [(name, values) for name, values in result["strategies"].items()]
    rows += [("router (2-fold CV)", result["router_cross_validated"]),
             ("router (in-sample)", {k_: v for k_, v in result["router_in_sample"].items() if k_ != "routes"})]
    print("| strategy | questions | EM | F1 | context tokens | prompt tokens | LLM calls | p-mean ms |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name, values in rows:
        print(f"| {name} | {values['questions']} | {values['exact_match']:.2f} | {values['f1']:.3f} | "
              f"{values['context_tokens']:.0f} | {values['prompt_tokens']:.0f} | {values['llm_calls']:.1f} | "
              f"{values['total_ms']:.0f} |")
    print(f"\nfold routes: {[fold['routes'] for fold in result['folds']]}")
    print(f"routed to (CV): {result['router_routed_to']}\n\n{full.markdown()}")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
