"""KHL-RAG on a built graph: the paragraph graph's build cost by corpus size (pairs asked against all pairs),
retrieval next to naive / LARAG / hybrid with the paper's ablations, and the LLM's cost.

    .venv/bin/python benchmarks/khl.py --data-dir DIR --qa QA.jsonl --out docs/benchmarks/khl_hotpotqa.json

DIR holds a graph built with `neoweave ingest` and `neoweave enrich kg` (the KG half). Steps:

1. `enrich rst --method fast` grown in increments up to each of `--sizes` chunks (cumulative: the build at a size
   is the sum of the increments up to it; a graph already built is not re-measured);
2. retrieval at k = 5 on every question: naive, larag, hybrid, khl full (fast question analysis) and the
   ablations (KG only, paragraph graph with plain dense seeds, with dual-semantic seeds), and tau 0 / 5 / 7;
3. with `--llm-dir` (a copy of the graph): `enrich rst --method llm` grown to each of `--llm-sizes` chunks with
   the local model (NEOWEAVE_LLM_* may name another): calls, tokens and time by size;
4. khl with the LLM's question analysis on the first `--llm-questions` questions.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.eval.runner import RunConfig  # noqa: E402
from neoweave.kb import evaluate  # noqa: E402

FAST = {"analysis": "fast"}
VARIANTS = {  # name in the report -> (strategy, parameters)
    "naive": ("naive", {}),
    "larag": ("larag", {}),
    "hybrid": ("hybrid", {}),
    "khl full (fast analysis)": ("khl", FAST),
    "khl full, reasoning mix (3:7) for all": ("khl", {**FAST, "question_type": "reasoning"}),
    "khl KG only": ("khl", {**FAST, "mode": "kg"}),
    "khl HLPG only (dense seeds + RST)": ("khl", {**FAST, "mode": "hlpg"}),
    "khl HLPG + dual-semantic filter": ("khl", {**FAST, "mode": "hlpg_filter"}),
    "khl HLPG + filter, no RST neighbours": ("khl", {**FAST, "mode": "hlpg_filter", "neighbours_per_seed": 0}),
    "khl HLPG + filter, tau 0": ("khl", {**FAST, "mode": "hlpg_filter", "tau": 0.0}),
    "khl HLPG + filter, tau 7": ("khl", {**FAST, "mode": "hlpg_filter", "tau": 7.0}),
}
KEEP = ("strategy", "k", "questions", "hit", "perfect", "recall", "mrr", "chunks", "context_tokens", "llm_calls",
        "llm_tokens", "p50_ms", "p95_ms", "stage_ms")
BUILD_KEYS = ("pairs_asked", "pairs_all_in_documents", "pairs_all_in_corpus", "edges", "pairs_with_edge",
              "llm_feature_fallbacks", "llm_pair_fallbacks")


def _summary(outcome, name: str) -> dict:
    row = next(r for r in outcome.rows if r["type"] == "all")
    return {"variant": name, **{key: row[key] for key in KEEP if key in row}}


def _grow(settings, sizes: list[int | None], method: str, parameters: dict, llm=None) -> list[dict]:
    """Build the paragraph graph in increments up to each size; per size the cumulative cost."""
    from neoweave.embeddings import Embedder
    from neoweave.enrich import run
    from neoweave.store import open_store

    embedder = Embedder(settings.embedding.model)
    rows, total = [], {"chunks": 0, "seconds": 0.0, "llm_calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    counters: dict[str, int] = {}
    with open_store(settings) as store:
        for size in sizes:
            limit = None if size is None else max(size - total["chunks"], 0)
            started = time.perf_counter()
            report = run("rst", store, embedder=embedder, llm=llm, method=method, limit=limit, **parameters)
            total["seconds"] += time.perf_counter() - started
            total["chunks"] += report.chunks
            for key in ("llm_calls", "prompt_tokens", "completion_tokens"):
                total[key] += getattr(report, key)
            for key, value in report.counters.items():
                counters[key] = counters.get(key, 0) + value
            relations = {k.removeprefix("relation_"): v for k, v in counters.items() if k.startswith("relation_")}
            rows.append({"chunks": total["chunks"], "seconds": round(total["seconds"], 1),
                         "chunks_per_second": round(total["chunks"] / total["seconds"], 2) if total["seconds"] else 0,
                         **{k: total[k] for k in ("llm_calls", "prompt_tokens", "completion_tokens")},
                         **{k: counters.get(k, 0) for k in BUILD_KEYS}, "relations": relations,
                         "failures": len(report.failures)})
            logging.info("rst %s up to %s chunks: %s", method, size, rows[-1])
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--graph", default="neoweave")
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--types", default=None, help="only questions of these types (comma-separated)")
    parser.add_argument("--sizes", default="250,500,all", help="cumulative corpus sizes (chunks) of the fast build")
    parser.add_argument("--cross-document", action="store_true", help="rst pairs across documents too")
    parser.add_argument("--llm-dir", type=Path, help="a copy of the graph for the LLM build (its rst is replaced)")
    parser.add_argument("--llm-sizes", default="10,20,40")
    parser.add_argument("--llm-questions", type=int, default=0)
    parser.add_argument("--skip", default="", help="steps to skip: build,variants")
    parser.add_argument("--without", default="", help="strategies left out of the variants (comma-separated): "
                        "larag on a link-heavy graph first embeds every link context it has not yet")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "httpcore", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    settings = load_settings(overrides={"falkordb": {"data_dir": args.data_dir, "graph": args.graph}})
    skip = set(args.skip.split(",")) - {""}
    types = args.types.split(",") if args.types else None
    parameters = {"cross_document": args.cross_document}
    results: dict = json.loads(args.out.read_text()) if args.out.exists() else {}
    results.update(qa=str(args.qa), rst_parameters=parameters)

    def save() -> None:
        args.out.write_text(json.dumps(results, indent=1))

    sizes = [None if s == "all" else int(s) for s in args.sizes.split(",")]
    if "build" not in skip:
        build = _grow(settings, sizes, "fast", parameters)
        if build[-1]["chunks"]:  # keep the measured build of an earlier run when nothing was left to do
            results["fast_build_by_size"] = build
        save()
    work = args.out.parent / (args.out.stem + "-runs")
    if "variants" not in skip:
        results["retrieval_k5"] = []
        without = set(args.without.split(",")) - {""}
        for name, (strategy, overrides) in VARIANTS.items():
            if strategy in without:
                continue
            outcome = evaluate(settings, args.qa, RunConfig([strategy], [5], parameters={strategy: overrides}),
                               work / name.replace(" ", "_").replace(",", "").replace("(", "").replace(")", ""),
                               types=types, title=name)
            results["retrieval_k5"].append(_summary(outcome, name))
            save()
    if args.llm_dir:
        from neoweave.llm import create_gateway

        llm_settings = load_settings(overrides={"falkordb": {"data_dir": args.llm_dir, "graph": args.graph}})
        llm = create_gateway(llm_settings)
        results["llm_model"] = llm.model
        results["llm_build_by_size"] = _grow(llm_settings, [int(s) for s in args.llm_sizes.split(",")], "llm",
                                             parameters, llm=llm)
        save()
    if args.llm_questions:
        rows = []
        for name, (strategy, overrides) in {"naive": ("naive", {}), "khl full (fast analysis)": ("khl", FAST),
                                            "khl full (LLM analysis)": ("khl", {})}.items():
            outcome = evaluate(settings, args.qa, RunConfig([strategy], [5], parameters={strategy: overrides}),
                               work / ("llm-" + str(len(rows))), types=types, limit=args.llm_questions,
                               title=name)
            rows.append(_summary(outcome, name))
        results["with_llm_first_questions"] = {"questions": args.llm_questions, "rows": rows}
        save()
    print(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
