"""Vector recall: how FalkorDB's HNSW index (M, efConstruction, efRuntime) trades recall@10 for time as the
graph grows, on the scale benchmark's real vectors.

    .venv/bin/python benchmarks/vector_recall.py --data-dir /work/bench/scale --sizes 13422,41334,111114 \\
        --configs 16:200 --out docs/benchmarks/vector_recall.json

Reads the chunk vectors of the graph `benchmarks/scale.py` built in `--data-dir` (MiniLM vectors of copies of
the Python 3.11 docs; in id order the first 13,422 are copy 0, so a size prefix is the graph the scale
benchmark had at that size) and, per size and `M:efConstruction` config, loads the first N into a fresh
graph the way ingest writes them, with the index built at efRuntime 10. Questions: the 16 user questions of
the scale benchmark and the Python FAQ's 174 (190 distinct).

efRuntime is fixed when FalkorDB creates an index, but a query asking for k neighbours searches
max(efRuntime, k) candidates (the HNSW of RediSearch's VecSim), so the top 10 of a top-`ef` query is the
answer of the same index searched at efRuntime `ef`. That is how every `--ef` value is measured on one build.
The index is then rebuilt at the default efRuntime, which draws a new random HNSW graph, and timed with plain
top-10 queries: its recall beside the first build's at the same ef shows the spread between builds.

Per size and config: load + index seconds; per ef, strict recall@10 (the exact ten ids) and tie-aware
recall@10 (ann-benchmarks' rule: a found vector within 1e-3 of the 10th exact score counts; near-twins from
the copies make the 10th place a coin toss otherwise), and the share of questions whose 10th and 11th exact
scores are within 1e-3.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import (  # noqa: E402
    MODEL,
    ExactTop10,
    all_vectors,
    load_as_ingest,
    questions_for,
    scratch_store,
    summary,
    timed_search,
)

from neoweave.config import FalkorDBSettings  # noqa: E402
from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402

log = logging.getLogger("vector_recall")


def top10_at(store: FalkorDBStore, queries: np.ndarray, ef: int) -> list[list[str]]:
    """The top 10 of a top-`ef` query: the answers of an index searching `ef` candidates."""
    found = []
    for vector in queries:
        rows = store.run("chunk_vector_search", {"k": max(ef, 10), "embedding": vector.tolist()})
        found.append([row["chunk_id"] for row in rows][:10])
    return found


def measure(server: EmbeddedFalkorDB, ids: list[str], matrix: np.ndarray, queries: np.ndarray,
            exact: ExactTop10, m: int, ef_construction: int, efs: list[int], default_ef: int) -> dict:
    with scratch_store(server, "recall", ef_runtime=10, ef_construction=ef_construction, hnsw_m=m) as store:
        started = time.perf_counter()
        load_as_ingest(store, ids, matrix)
        row = {"m": m, "ef_construction": ef_construction, "load_and_index_s": round(time.perf_counter() - started, 1),
               "ef_runtime": {}}
        for ef in efs:
            row["ef_runtime"][str(ef)] = exact.report(top10_at(store, queries, ef))
            log.info("%d chunks, M %d, efC %d, ef %d: %s", len(ids), m, ef_construction, ef, row["ef_runtime"][str(ef)])
        store.ef_runtime = default_ef
        started = time.perf_counter()
        store.apply_schema(MODEL, matrix.shape[1])  # recreates the index at the default efRuntime
        row["rebuild_at_default_s"] = round(time.perf_counter() - started, 1)
        latencies, found = timed_search(store, queries)
        row["default"] = {"ef_runtime": default_ef, **summary(latencies), **exact.report(found)}
        return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the scale benchmark's --data-dir")
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"),
                        help="Sphinx HTML whose FAQ gives the questions")
    parser.add_argument("--sizes", default="13422,41334,111114")
    parser.add_argument("--configs", default="16:200", help="M:efConstruction pairs, comma-separated")
    parser.add_argument("--ef", default="10,50,100,200,400")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        configs = [tuple(int(v) for v in pair.split(":")) for pair in args.configs.split(",")]
        efs = [int(e) for e in args.ef.split(",")]
        sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        sys.exit("--configs takes M:efConstruction pairs (16:200,32:200); --ef and --sizes integers")
    default_ef = FalkorDBSettings().ef_runtime
    queries = np.asarray(Embedder(MODEL).embed(questions_for(args.html, 190)), dtype=np.float32)
    server = EmbeddedFalkorDB(args.data_dir / "graph")
    source = FalkorDBStore(server=server, graph="scale")
    all_ids, all_matrix = all_vectors(source)
    source.close()
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"sizes": {}}
    results["setup"] = {"queries": len(queries), "tie_epsilon": 1e-3, "ef_runtime": efs}
    try:
        for size in sizes:
            ids, matrix = all_ids[:size], all_matrix[:size]
            exact = ExactTop10(matrix, ids, queries)
            entry = results["sizes"].setdefault(str(len(ids)), {})
            entry["near_tie_share"] = round(exact.near_tie_share(), 3)
            for m, ef_construction in configs:
                entry[f"M{m}_efC{ef_construction}"] = measure(server, ids, matrix, queries, exact, m,
                                                              ef_construction, efs, default_ef)
                args.out.write_text(json.dumps(results, indent=1))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
