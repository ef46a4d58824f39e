"""LLM community reports with the local model: calls, tokens, wall time and fallbacks per level.

    python benchmarks/community_reports_llm.py --data-dir /tmp/bench_reports \
        --jsonl ../shared/data/hotpotqa/corpus.jsonl --records 60 --model qwen2.5-coder-1.5b \
        --out docs/benchmarks/community_reports_llm.json

The first N records of the corpus are ingested into a fresh data directory, enriched with `enrich kg`
(fast), clustered, and every community gets an llm report (`enrich communities --method llm`) with the
response cache off, so every number is a real call. A second run shows what an unchanged graph costs (no
call). The per-report means are projected onto the community counts of the whole corpus when
`--full-counts` gives a JSON of {level: communities} (from `neoweave status` on the full graph).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.enrich import run  # noqa: E402
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions  # noqa: E402
from neoweave.llm import create_gateway  # noqa: E402
from neoweave.llm.local import stop_local_servers  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="emptied first")
    parser.add_argument("--jsonl", type=Path, default=ROOT.parent / "shared/data/hotpotqa/corpus.jsonl")
    parser.add_argument("--records", type=int, default=60)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--max-cluster-size", type=int, default=10,
                        help="smaller values split small corpora into a hierarchy (parents from sub-reports)")
    parser.add_argument("--full-counts", type=Path, help="JSON {level: communities} of the whole corpus")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    shutil.rmtree(args.data_dir, ignore_errors=True)
    args.data_dir.mkdir(parents=True)
    subset = args.data_dir / "corpus.jsonl"
    with args.jsonl.open(encoding="utf-8") as source:
        lines = [line for line in source if line.strip()][:args.records]
    subset.write_text("".join(lines), encoding="utf-8")

    embedder = Embedder("all-MiniLM-L6-v2")
    store = FalkorDBStore(server=EmbeddedFalkorDB(args.data_dir / "graph"))
    Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(subset)
    kg = run("kg", store, embedder=embedder, progress=False)
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": args.data_dir},
                                                    "llm": {"model": args.model, "cache": False}})
    llm = create_gateway(settings)
    llm.chat([{"role": "user", "content": "Hi"}], max_tokens=1, stage="warmup")  # load the model before timing
    started = time.perf_counter()
    step = {"max_cluster_size": args.max_cluster_size}
    report = run("communities", store, embedder=embedder, llm=llm, method="llm", progress=True, **step)
    seconds = time.perf_counter() - started
    again_started = time.perf_counter()
    again = run("communities", store, embedder=embedder, llm=llm, method="llm", progress=False, **step)
    again_seconds = time.perf_counter() - again_started
    calls = [c for c in llm.ledger.calls if c.stage == "enrich:communities"]
    latencies = [c.latency_ms / 1000 for c in calls if not c.cached]
    counters = report.counters
    levels = sorted({int(k.split("_")[1]) for k in counters if k.startswith("level_") and k.endswith("_llm_calls")})
    per_level = {level: {
        "communities": counters.get(f"level_{level}_communities", 0),
        "reports_written": counters.get(f"level_{level}_reports_written", 0),
        "llm_calls": counters.get(f"level_{level}_llm_calls", 0),
        "prompt_tokens": counters.get(f"level_{level}_prompt_tokens", 0),
        "completion_tokens": counters.get(f"level_{level}_completion_tokens", 0),
        "seconds": report.phase_seconds.get(f"reports_level_{level}", 0.0)} for level in levels}
    written = counters.get("reports_written", 0)
    result = {
        "corpus": f"{args.jsonl} (first {args.records} records)", "model": args.model,
        "max_cluster_size": args.max_cluster_size,
        "chunks": store.counts().nodes.get("Chunk", 0), "entities": kg.counters.get("entities", None),
        "communities": counters.get("communities", 0), "reports_written": written,
        "llm_calls": report.llm_calls, "prompt_tokens": report.prompt_tokens,
        "completion_tokens": report.completion_tokens, "fallbacks": counters.get("llm_fallbacks", 0),
        "reports_from_sub_reports": counters.get("reports_from_sub_reports", 0),
        "seconds": round(seconds, 1), "seconds_per_report": round(seconds / max(written, 1), 2),
        "call_seconds_p50": round(statistics.median(latencies), 2) if latencies else None,
        "call_seconds_p95": round(sorted(latencies)[int(0.95 * (len(latencies) - 1))], 2) if latencies else None,
        "per_level": per_level, "failures": report.failures[:5],
        "rerun_unchanged": {"seconds": round(again_seconds, 3), "llm_calls": again.llm_calls,
                            "reports_written": again.counters.get("reports_written", 0)},
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
    }
    if args.full_counts:
        full = {int(k): int(v) for k, v in json.loads(args.full_counts.read_text()).items()}
        per_report = seconds / max(written, 1)
        result["projection_full_corpus"] = {"communities": sum(full.values()),
                                            "hours": round(sum(full.values()) * per_report / 3600, 1)}
    samples = store.query("MATCH (c:Community) WHERE c.method = 'llm' RETURN c.level AS level, c.size AS size, "
                          "c.full_report AS report ORDER BY c.size DESC, c.id LIMIT 2")
    result["sample_reports"] = samples
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    store.close()
    stop_local_servers(args.data_dir)


if __name__ == "__main__":
    tempfile.tempdir = None
    main()
