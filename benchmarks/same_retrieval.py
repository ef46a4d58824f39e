"""Did two evaluation runs retrieve the same thing? Per (strategy, k, question): the same chunk ids in the same
order, and how far their scores moved; per (strategy, k): the summary measures side by side.

    .venv/bin/python benchmarks/same_retrieval.py RUN_A RUN_B

RUN_A and RUN_B are `neoweave eval --out` directories over the same QA set (records.json, summary.json). Used to
show that a refactor or another embedder runtime leaves retrieval unchanged (benchmarks/runtime_equivalence.sh).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

MEASURES = ("hit", "perfect", "recall", "mrr", "chunks", "context_tokens")


def records(run: Path) -> dict[tuple, list[dict]]:
    return {(r["strategy"], r["k"], r["question_id"]): r["retrieved"]
            for r in json.loads((run / "records.json").read_text())}


def summary(run: Path) -> dict[tuple, dict]:
    data = json.loads((run / "summary.json").read_text())
    rows = data["rows"] if isinstance(data, dict) else data
    return {(r["strategy"], r["k"]): r for r in rows if r.get("type") == "all"}


def main() -> None:
    a_dir, b_dir = Path(sys.argv[1]), Path(sys.argv[2])
    a, b = records(a_dir), records(b_dir)
    same = [key for key in a if [x["chunk_id"] for x in a[key]] == [x["chunk_id"] for x in b.get(key, [])]]
    moved = max((abs(x["score"] - y["score"]) for key in same for x, y in zip(a[key], b[key], strict=True)),
                default=0.0)
    print(f"same chunk ids in the same order: {len(same)} of {len(a)} records; largest score change {moved:.2e}")
    sa, sb = summary(a_dir), summary(b_dir)
    print("| strategy | k | " + " | ".join(MEASURES) + " | differs |")
    print("| --- | --- | " + " | ".join("---" for _ in MEASURES) + " | --- |")
    for key in sorted(sa):
        row_a, row_b = sa[key], sb.get(key, {})
        cells = [f"{row_a.get(m)}" if row_a.get(m) == row_b.get(m) else f"{row_a.get(m)} / {row_b.get(m)}"
                 for m in MEASURES]
        differs = "no" if all(row_a.get(m) == row_b.get(m) for m in MEASURES) else "yes"
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {differs} |")


if __name__ == "__main__":
    main()
