"""What exact vector search costs a retrieval: each question retrieved with the label searched exactly (the default
below `store.exact_search_below`) and by its index only, interleaved so both see the same load.

    .venv/bin/python benchmarks/exact_search.py --data-dir G --qa QA.jsonl --limit 60 --out exact_search.json

Prints and writes, per LLM-free strategy, p50/p90 milliseconds of `retrieve` both ways and how many retrievals
gave the same chunks (docs/benchmarks/same_retrieval.md).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import neoweave
from neoweave.config import EXACT_SEARCH_BELOW

STRATEGIES = ("naive", "larag", "kg", "ppr", "hybrid")


def percentile(values: list[float], share: float) -> float:
    return round(sorted(values)[min(len(values) - 1, int(share * len(values)))], 1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--limit", type=int, default=60)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--strategies", default=",".join(STRATEGIES))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in args.qa.read_text().splitlines() if line.strip()]
    questions = questions[: args.limit]
    result: dict = {"questions": len(questions), "k": args.k, "strategies": {}}
    with neoweave.open(args.data_dir) as kb:
        store = kb.store
        for question in questions[:3]:  # model and connections warm
            kb.retrieve(question, "naive", args.k)
        for name in args.strategies.split(","):
            times: dict[str, list[float]] = {"exact": [], "index": []}
            same = 0
            for question in questions:
                found = {}
                for way, threshold in (("exact", EXACT_SEARCH_BELOW), ("index", 0)):
                    store.exact_search_below = threshold
                    started = time.perf_counter()
                    items = kb.retrieve(question, name, args.k).items
                    times[way].append((time.perf_counter() - started) * 1000)
                    found[way] = [item.chunk_id for item in items]
                same += found["exact"] == found["index"]
            result["strategies"][name] = {
                **{f"{way}_p{p}_ms": percentile(values, p / 100) for way, values in times.items() for p in (50, 90)},
                "same_chunks": same}
            print(name, result["strategies"][name], flush=True)
        result["exact_chunks"] = store.searches_exactly(("Chunk",))
        result["exact_entities"] = store.searches_exactly(("Entity",))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
