"""Evaluate one strategy under named parameter sets on a built graph (the variant strategies of
`ppr_edge_weights.py` and `ppr_sentence_bridge.py`): a report per variant and one rows.json of them all."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.eval.runner import RunConfig  # noqa: E402
from neoweave.kb import evaluate  # noqa: E402

MEASURES = ("hit", "perfect", "recall", "context_tokens", "p50_ms")


def variant_arguments(description: str, default_variants: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data-dir", required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--types", default=None, help="only questions of these types (comma-separated)")
    parser.add_argument("--variants", default=default_variants, help="JSON: variant name -> parameters")
    parser.add_argument("--out", type=Path, required=True, help="a directory for the reports")
    return parser


def evaluate_variants(strategy: str, args: argparse.Namespace, ks: tuple[int, ...] = (2, 5, 10)) -> list[dict]:
    """Each variant of `args.variants` evaluated at `ks`; prints and returns one row per (variant, type, k)."""
    settings = load_settings(overrides={"falkordb": {"data_dir": args.data_dir}})
    types = args.types.split(",") if args.types else None
    rows: list[dict] = []
    for name, parameters in json.loads(args.variants).items():
        outcome = evaluate(settings, args.qa, RunConfig([strategy], list(ks), parameters={strategy: parameters},
                                                        bertscore=None),
                           args.out / re.sub(r"\W+", "-", name), types=types, title=name, progress=False)
        for row in outcome.rows:
            if row["type"] == "all" or (types and row["type"] in types):
                rows.append({"variant": name, "parameters": parameters, "type": row["type"], "k": row["k"],
                             **{key: row[key] for key in MEASURES if key in row}})
                print(json.dumps(rows[-1]), flush=True)
        (args.out / "rows.json").write_text(json.dumps(rows, indent=1))
    return rows
