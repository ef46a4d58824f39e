"""ppr's seed mechanisms of retrieval II, each switched off in turn, on a built graph (retrieval only).

    .venv/bin/python benchmarks/ppr_ablation.py --data-dir DIR --qa QA.jsonl [--types with-links] \
        --out docs/benchmarks/ppr_ablation_hotpotqa.json

DIR holds a graph built with `neoweave ingest` and `neoweave enrich kg` (fast). Each variant is `neoweave eval`
of ppr at k = 2, 5, 10 with the defaults but one mechanism off (and all of them off, which is ppr's seeding
before retrieval II except for the full-text fix in entity linking, which has no switch); one JSON row per
variant and k, and a markdown table on stdout. Optional variants with the parameters not made defaults
(`vector_weight`, `sibling_weight` 0) show why they were not.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.eval.runner import RunConfig  # noqa: E402
from neoweave.kb import evaluate  # noqa: E402

OFF = {"common_nouns": False, "comparison_exponent": 1.0, "sibling_weight": 1.0}
VARIANTS = {  # name in the report -> ppr parameters
    "defaults": {},
    "without common nouns (common_nouns=false)": {"common_nouns": False},
    "without comparison sides (comparison_exponent=1)": {"comparison_exponent": 1.0},
    "without sibling demotion (sibling_weight=1)": {"sibling_weight": 1.0},
    "all three off": OFF,
    "siblings dropped (sibling_weight=0)": {"sibling_weight": 0.0},
    "embedding links at a quarter (vector_weight=0.25)": {"vector_weight": 0.25},
}
KEEP = ("k", "questions", "hit", "perfect", "recall", "mrr", "chunks", "context_tokens")  # quality only: timed apart


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--graph", default="neoweave")
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--types", default=None, help="only questions of these types (comma-separated)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    settings = load_settings(overrides={"falkordb": {"data_dir": args.data_dir, "graph": args.graph}})
    types = args.types.split(",") if args.types else None
    work = args.out.parent / (args.out.stem + "-runs")
    rows = []
    for name, parameters in VARIANTS.items():
        outcome = evaluate(settings, args.qa, RunConfig(["ppr"], [2, 5, 10], parameters={"ppr": parameters},
                                                        bertscore=None),
                           work / str(len(rows)), types=types, title=name)
        for row in outcome.rows:
            if row["type"] == "all" or (types and row["type"] in types):
                rows.append({"variant": name, "parameters": parameters, **{k: row[k] for k in KEEP if k in row}})
        args.out.write_text(json.dumps({"qa": str(args.qa), "types": types, "rows": rows}, indent=1))
    print("| variant | k | hit | perfect | recall | chunks | context tokens |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['variant']} | {row['k']} | {row['hit']:.3f} | {row['perfect']:.3f} | {row['recall']:.3f} | "
              f"{row['chunks']:.1f} | {row['context_tokens']:.0f} |")


if __name__ == "__main__":
    main()
