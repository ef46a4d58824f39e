"""ppr (or kg) over the walk index against the same over the store, on a built graph: same answers, time, build
cost, bytes.

    python benchmarks/walk_index.py --data-dir /work/bench/idx/python-docs --qa FAQ/qa.jsonl --type with-links \
        --key url --label python_docs_faq --out docs/benchmarks/walk_index.json [--strategy kg]

kg (`--strategy kg`) scores its relation hops from the index instead of a `kg_entity_relations` statement per
hop; its facts are compared too.

For each k, every question is retrieved with `walk_index=store` (a `ppr_expand` statement per hop, as before the
index) and over the index (built fresh here, timed; then loaded from its files as a new process would): the
returned chunks compared question by question, hit / perfect / recall of both, and retrieval time without the
question's embedding (p50 / p95 over a first and a repeat pass). Also: the index's build time (from nothing,
and again from the index just built, as after a write that changed no vector) and bytes by part
(per chunk and per 100k chunks at this graph's shape), the time to load it from its files, and the process's
resident memory before and after, and the question's embedding time (the same work in every run: a gauge
of how fast the machine was). The graph must have been written by a neoweave with write stamps (any write
gives it one: `neoweave --data-dir DIR walk-index`). Run it alone: other work on the two cores shows in every
number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import neoweave
from neoweave.eval import metrics
from neoweave.query.walk_build import build_walk_index
from neoweave.query.walk_index import WalkIndex, WalkIndexes

PARTS = {"vectors": ("chunk_vectors", "entity_vectors", "link_vectors"),
         "ids": ("chunk_ids", "entity_ids", "section_ids", "entity_types")}
"""Groups of the index's arrays reported apart (the rest is adjacency and per-node numbers)."""


def resident_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def evidence_keys(kb: neoweave.KnowledgeBase, items: list, key: str, titles: dict[str, str]) -> list[str]:
    """What a question's evidence names: urls (Python docs FAQ) or document titles (HotpotQA)."""
    if key == "url":
        return [item.url for item in items]
    missing = sorted({item.doc_id for item in items} - set(titles))
    if missing:
        titles.update({row["id"]: row["title"] for row in kb.store.run("document_titles", {"ids": missing})})
    return [titles.get(item.doc_id, item.doc_id) for item in items]


OVER = {"ppr": "expanded_over", "kg": "relations_over"}
"""The result parameter that says whether a strategy read the index or the store."""


def run_pass(kb: neoweave.KnowledgeBase, questions: list[dict], strategy: str, k: int, walk_index: str, key: str,
             titles: dict[str, str]) -> dict:
    chosen = kb.strategy(strategy, k=k, walk_index=walk_index)
    returned, times, embeds, scores = [], [], [], {"hit": [], "perfect": [], "recall": []}
    for question in questions:
        result = chosen.retrieve(question["question"])
        assert result.parameters.get(OVER[strategy], "store") == ("store" if walk_index == "store" else "walk index")
        times.append(sum(ms for stage, ms in result.cost.milliseconds.items() if stage != "embed"))
        embeds.append(result.cost.milliseconds.get("embed", 0.0))
        returned.append([item.chunk_id for item in result.items] + [fact.text() for fact in result.facts])
        found = evidence_keys(kb, result.items, key, titles)
        scores["hit"].append(metrics.hit(found, question["evidence"]))
        scores["perfect"].append(metrics.perfect(found, question["evidence"]))
        scores["recall"].append(metrics.evidence_recall(found, question["evidence"]))
    return {"returned": returned, "ms": times, "embed_ms": embeds,
            **{name: statistics.mean(v) for name, v in scores.items()}}


def timing(first: list[float], repeat: list[float]) -> dict:
    both = sorted(first + repeat)
    return {"p50_ms": round(statistics.median(both), 2), "p95_ms": round(both[int(0.95 * (len(both) - 1))], 2),
            "first_p50_ms": round(statistics.median(first), 2), "repeat_p50_ms": round(statistics.median(repeat), 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True)
    parser.add_argument("--type", help="only questions of this type (the FAQ's with-links)")
    parser.add_argument("--key", choices=("url", "title"), default="title", help="what the evidence names")
    parser.add_argument("--ks", default="2,5,10")
    parser.add_argument("--strategy", choices=sorted(OVER), default="ppr")
    parser.add_argument("--label", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.qa.read_text().splitlines() if line.strip()]
    if args.type:
        questions = [q for q in questions if q.get("type") == args.type]
    ks = [int(k) for k in args.ks.split(",")]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()
    report: dict = {"date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"), "commit": commit,
                    "data_dir": str(args.data_dir), "questions": len(questions), "cores": os.cpu_count(),
                    "strategy": args.strategy}
    with neoweave.open(args.data_dir, read_only=True, limits=neoweave.Limits.unbounded()) as kb:
        store, titles = kb.store, {}
        stamp = store.stamp()
        if stamp is None:
            sys.exit(f"{args.data_dir}: the graph has no write stamp; run `neoweave --data-dir {args.data_dir} "
                     "walk-index` once")
        kb.retrieve("warm up", strategy=args.strategy, walk_index="store")
        report["rss_mb_before_index"] = round(resident_mb(), 1)
        started = time.perf_counter()
        index = build_walk_index(store, stamp)
        report["build_s"] = round(time.perf_counter() - started, 2)
        directory = store.derived_directory("walk-index")
        assert directory is not None, "a local FalkorDB store is needed (the index is saved next to its files)"
        shutil.rmtree(directory, ignore_errors=True)
        started = time.perf_counter()
        index.save(directory)
        report["save_s"] = round(time.perf_counter() - started, 2)
        started = time.perf_counter()
        build_walk_index(store, stamp, previous=index)  # what a rebuild after a write that changed no vector costs
        report["rebuild_unchanged_s"] = round(time.perf_counter() - started, 2)
        chunks = len(index.chunk_ids)
        by_part = {part: sum(getattr(index, name).nbytes for name in names) for part, names in PARTS.items()}
        by_part["adjacency and node data"] = index.nbytes() - sum(by_part.values())
        report["index"] = {**index.describe(), "bytes_by_part": by_part,
                           "bytes_per_chunk": round(index.nbytes() / chunks),
                           "mb_per_100k_chunks_at_this_shape": round(index.nbytes() / chunks * 100_000 / 1e6)}
        del index
        started = time.perf_counter()
        loaded = WalkIndex.load(directory, stamp)
        report["load_ms"] = round((time.perf_counter() - started) * 1000, 1)
        assert loaded is not None
        WalkIndexes.of(store)._current = None  # the next question loads the files, as a new process does
        report["runs"] = {}
        for k in ks:
            store_first = run_pass(kb, questions, args.strategy, k, "store", args.key, titles)
            store_repeat = run_pass(kb, questions, args.strategy, k, "store", args.key, titles)
            index_first = run_pass(kb, questions, args.strategy, k, "auto", args.key, titles)
            index_repeat = run_pass(kb, questions, args.strategy, k, "auto", args.key, titles)
            same = sum(a == b for a, b in zip(store_first["returned"], index_first["returned"], strict=True))
            report["runs"][k] = {
                "same_chunks_in_same_order": f"{same}/{len(questions)}",
                "store": {**{m: round(store_first[m], 4) for m in ("hit", "perfect", "recall")},
                          **timing(store_first["ms"], store_repeat["ms"])},
                "walk_index": {**{m: round(index_first[m], 4) for m in ("hit", "perfect", "recall")},
                               **timing(index_first["ms"], index_repeat["ms"])},
                # the question's embedding: the same work in every run, so it tells how fast the machine was
                "embed_p50_ms": round(statistics.median(store_first["embed_ms"] + index_first["embed_ms"]), 2)}
            print(args.label, k, json.dumps(report["runs"][k]), flush=True)
        report["rss_mb_after"] = round(resident_mb(), 1)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {}
    results[args.label] = report
    args.out.write_text(json.dumps(results, indent=1) + "\n")
    print(json.dumps({key: value for key, value in report.items() if key != "runs"}, indent=1))


if __name__ == "__main__":
    main()
