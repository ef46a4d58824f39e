"""Time the strategies again on a graph `scale.py` built and kept (no ingest, no enrichment).

A code change to a retriever is measured on the same graph, questions and defaults as the scale run, and
the result is appended to that size's row of the scale report (`retimed`, with date and commit), so the
earlier numbers stay beside the new ones:

    python benchmarks/retime.py --data-dir /work/bench/scale-kg --out docs/benchmarks/scale_kg.json --kg

Each strategy runs over the questions twice (first use, repeat; question embedding excluded). With `--kg`,
kg is also timed in the `KG_VARIANTS` (without hub pruning, with full-text linking) and per statement. Run
it alone: other work on the 2 cores shows up in every number.
"""

from __future__ import annotations

import argparse
import collections
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import MODEL, questions_for, retrieval_latencies, strategy_latency

from neoweave.config import FalkorDBSettings
from neoweave.embeddings import Embedder
from neoweave.query import strategy
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

KG_VARIANTS = {
    "kg_unpruned": {"max_degree": 10**9},  # hubs expanded too
    "kg_fulltext": {"link_fulltext": True},  # entity linking with the full-text branch over names and aliases
}
"""kg timed again with these parameters besides its defaults (label -> parameters)."""


def statement_times(store: FalkorDBStore, embedder: Embedder, name: str, questions: list[str]) -> dict:
    """Calls per question and p50 / mean milliseconds per question of each named statement a strategy sends
    (the retrieval trace's own timing, round trip included)."""
    chosen = strategy(name, store, embedder)
    times: dict[str, list[float]] = collections.defaultdict(list)
    calls: collections.Counter = collections.Counter()
    for question in questions:
        trace = chosen.retrieve(question).trace
        calls.update(trace.statements)
        for statement, ms in trace.statement_ms.items():
            times[statement].append(ms)
    return {statement: {"calls_per_question": round(calls[statement] / len(questions), 2),
                        "p50_ms_per_question": round(statistics.median(values), 2),
                        "mean_ms_per_question": round(statistics.mean(values), 2),
                        "mean_ms_per_call": round(sum(values) / calls[statement], 2)}
            for statement, values in sorted(times.items())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--data-dir", type=Path, required=True, help="the --data-dir of a scale.py run")
    parser.add_argument("--queries", type=int, default=190)
    parser.add_argument("--kg", action="store_true", help="the graph has `enrich kg`: time kg too")
    parser.add_argument("--out", type=Path, required=True, help="the scale report to append to")
    parser.add_argument("--note", help="conditions of the run, kept in the entry (what else ran, ...)")
    args = parser.parse_args()
    if not (args.data_dir / "graph").is_dir():
        sys.exit(f"no scale graph under {args.data_dir} (run benchmarks/scale.py --data-dir {args.data_dir})")
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"sizes": []}
    embedder = Embedder(MODEL)
    embedder.embed(["warm up"])
    questions = questions_for(args.html, args.queries)
    server = EmbeddedFalkorDB(args.data_dir / "graph")
    store = FalkorDBStore(server=server, graph="scale", ef_runtime=FalkorDBSettings().ef_runtime)
    try:
        chunks = store.counts().nodes.get("Chunk", 0)
        row = next((r for r in results["sizes"] if r["chunks"] == chunks), None)
        if row is None:
            row = {"size_target": chunks, "chunks": chunks}
            results["sizes"].append(row)
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
        entry = {"date": datetime.date.today().isoformat(), "commit": commit, "note": args.note,
                 "retrieval": retrieval_latencies(store, embedder, questions, kg=False)}
        if args.kg:
            entry["retrieval"].update(retrieval_latencies(store, embedder, questions, kg=True))
            for variant, parameters in KG_VARIANTS.items():
                for label in (variant, f"{variant}_repeat"):
                    entry["retrieval"][label] = strategy_latency(store, embedder, "kg", questions, **parameters)
            entry["kg_statements"] = statement_times(store, embedder, "kg", questions)
        print(json.dumps(entry, indent=1))
        row.setdefault("retimed", []).append(entry)
        args.out.write_text(json.dumps(results, indent=1))
    finally:
        store.close()
        server.stop()


if __name__ == "__main__":
    main()
