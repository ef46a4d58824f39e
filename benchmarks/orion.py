"""Orion-RAG on a built graph: tag index build time, retrieval next to naive / LARAG / hybrid with the paper's
ablations, the full pipeline (expansion + pruning with the local LLM) on a subset, and the paper's runtime setup
(8 concurrent requests).

    .venv/bin/python benchmarks/orion.py --data-dir DIR --qa QA.jsonl --out docs/benchmarks/orion_hotpotqa.json

DIR holds a graph built with `neoweave ingest` (and `enrich kg` for LARAG's inferred links, optional). Steps:

1. `enrich tags --method fast` (timed: the index build; skipped when every chunk is tagged already, then the
   recorded build time of that graph is not re-measured);
2. retrieval at k = 5 on every question: naive, larag, hybrid, orion with expansion and pruning off, and the
   ablations over which lists fuse (tag only, tag + semantic, semantic + sparse);
3. orion with expansion and pruning (the local model unless NEOWEAVE_LLM_* name another) on the first
   `--llm-questions` questions: quality, context tokens, LLM calls and tokens, latency per stage;
4. wall time of `--concurrent-questions` questions sent by 8 threads at once against one after another, for the
   LLM-free orion (the paper measured 8 concurrent requests).
"""

from __future__ import annotations

import argparse
import json
import logging
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.eval.runner import RunConfig, load_qa  # noqa: E402
from neoweave.kb import evaluate  # noqa: E402

FAST = {"expand": False, "prune": False}
VARIANTS = {  # name in the report -> (strategy, parameters)
    "naive": ("naive", {}),
    "larag": ("larag", {}),
    "hybrid": ("hybrid", {}),
    "orion (no expansion, no pruning)": ("orion", FAST),
    "orion, tag list only": ("orion", {**FAST, "indexes": ("tag",)}),
    "orion, tag + semantic": ("orion", {**FAST, "indexes": ("tag", "semantic")}),
    "orion, semantic + sparse (+15 dense candidates)": ("orion", {**FAST, "indexes": ("semantic", "sparse"),
                                                                  "dense_candidates": 15}),
}
KEEP = ("strategy", "k", "questions", "hit", "perfect", "recall", "mrr", "chunks", "context_tokens", "llm_calls",
        "llm_tokens", "p50_ms", "p95_ms", "stage_ms")


def _summary(outcome, name: str) -> dict:
    row = next(r for r in outcome.rows if r["type"] == "all")
    return {"variant": name, **{key: row[key] for key in KEEP if key in row}}


def _build_tags(settings) -> dict:
    from neoweave.embeddings import Embedder
    from neoweave.enrich import run
    from neoweave.store import open_store

    with open_store(settings) as store:
        report = run("tags", store, embedder=Embedder(settings.embedding.model), method="fast")
        counts = store.counts()
    return {"chunks_tagged": report.chunks, "seconds": round(report.seconds, 1),
            "chunks_per_second": round(report.chunks_per_second, 1), "chunks": counts.nodes.get("Chunk", 0),
            "tags": counts.nodes.get("Tag", 0), "tagged_edges": counts.relationships.get("TAGGED", 0)}


def _concurrency(settings, questions: list[str], workers: int) -> dict:
    from neoweave.embeddings import Embedder
    from neoweave.query import strategy
    from neoweave.store import open_store

    embedder = Embedder(settings.embedding.model)
    with open_store(settings) as store:
        orion = strategy("orion", store, embedder, **FAST)
        orion.retrieve(questions[0])  # warm up (model, statistics)
        started = time.perf_counter()
        for question in questions:
            orion.retrieve(question)
        sequential = time.perf_counter() - started
        started = time.perf_counter()
        with ThreadPoolExecutor(max_workers=workers) as pool:
            latencies = list(pool.map(lambda q: orion.retrieve(q).cost.total_ms, questions))
        concurrent = time.perf_counter() - started
    return {"questions": len(questions), "workers": workers, "sequential_s": round(sequential, 2),
            "concurrent_s": round(concurrent, 2), "speedup": round(sequential / concurrent, 2),
            "concurrent_p50_ms": round(statistics.median(latencies), 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--graph", default="neoweave")
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--types", default=None, help="only questions of these types (comma-separated)")
    parser.add_argument("--llm-questions", type=int, default=20)
    parser.add_argument("--concurrent-questions", type=int, default=64)
    parser.add_argument("--skip", default="", help="steps to skip: variants,llm,concurrency")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpcore", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = load_settings(overrides={"falkordb": {"data_dir": args.data_dir, "graph": args.graph}})
    types = args.types.split(",") if args.types else None
    skip = set(args.skip.split(",")) - {""}
    results: dict = json.loads(args.out.read_text()) if args.out.exists() else {}
    results["qa"] = str(args.qa)
    build = _build_tags(settings)
    if build["chunks_tagged"] or "tag_index_build" not in results:  # keep the measured build of an earlier run
        results["tag_index_build"] = build
    work = args.out.parent / (args.out.stem + "-runs")
    if "variants" not in skip:
        results["retrieval_k5"] = []
        for name, (strategy, parameters) in VARIANTS.items():
            outcome = evaluate(settings, args.qa, RunConfig([strategy], [5], parameters={strategy: parameters}),
                               work / name.replace(" ", "_").replace(",", ""), types=types, title=name)
            results["retrieval_k5"].append(_summary(outcome, name))
            args.out.write_text(json.dumps(results, indent=1))
    if "llm" not in skip:
        rows = []
        for name, (strategy, parameters) in {"naive": ("naive", {}),
                                             "orion (no expansion, no pruning)": ("orion", FAST),
                                             "orion (expansion + pruning, local LLM)": ("orion", {})}.items():
            outcome = evaluate(settings, args.qa, RunConfig([strategy], [5], parameters={strategy: parameters}),
                               work / ("llm-" + name.split(" ")[0] + str(len(rows))), types=types,
                               limit=args.llm_questions, title=name)
            rows.append(_summary(outcome, name))
        results["with_llm_first_questions"] = {"questions": args.llm_questions, "rows": rows}
        args.out.write_text(json.dumps(results, indent=1))
    if "concurrency" not in skip:
        questions = [q.question for q in load_qa(args.qa) if not types or q.type in types][:args.concurrent_questions]
        results["concurrency"] = _concurrency(settings, questions, 8)
    args.out.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
