"""Strict vector recall@10 of an index grown by large ingests, on a deduplicated corpus (no near-twins).

    .venv/bin/python benchmarks/dedup_corpus.py --out /work/bench/dedup          # builds the corpus once
    .venv/bin/python benchmarks/vector_recall_grown.py --corpus /work/bench/dedup --data-dir /work/bench/grown \\
        --out docs/benchmarks/vector_recall_grown.json

The corpus's chunks (`dedup_corpus.py`: Python, Linux kernel, PostgreSQL, Git and Rust documentation,
deduplicated by text and by vector) are written into one graph the way ingest writes them (`upsert_chunks` in
batches, each vector entering HNSW as it is written, the store's default M, efConstruction and efRuntime), one
package after another as a user ingests one documentation set after another. After each package the index is
queried as it has grown, with plain top-10 queries at the default efRuntime, for two query sets: chunks held out of
the corpus (one in 200, texts the index does not hold) and the scale benchmark's 190 questions about Python. Each
is scored against exact cosine top-10 (numpy over the vectors written so far), strictly (the exact ten ids) and
tie-aware (ann-benchmarks' 1e-3 tolerance), with the share of queries whose 10th and 11th exact scores are within
that tolerance. At the end the index is rebuilt over the stored nodes (what a rebuild past a growth threshold
would do) and scored again.
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
    chunk_rows,
    questions_for,
    scratch_store,
    seed_parents,
    summary,
    timed_search,
)

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402

log = logging.getLogger("vector_recall_grown")


def increments(packages: list[str]) -> list[tuple[str, int]]:
    """(package, corpus size after it) in corpus order: each package is one contiguous run of chunks."""
    out: list[tuple[str, int]] = []
    for position, package in enumerate(packages, start=1):
        if out and out[-1][0] == package:
            out[-1] = (package, position)
        else:
            out.append((package, position))
    return out


def scored(store, ids: list[str], matrix: np.ndarray, query_sets: dict[str, np.ndarray]) -> dict:
    result = {}
    for name, queries in query_sets.items():
        exact = ExactTop10(matrix, ids, queries)
        latencies, found = timed_search(store, queries)
        result[name] = {"queries": len(queries), "near_tie_share": round(exact.near_tie_share(), 3),
                        **exact.report(found), **summary(latencies)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, required=True, help="dedup_corpus.py's --out")
    parser.add_argument("--data-dir", type=Path, required=True, help="where the embedded FalkorDB keeps the graph")
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"),
                        help="Sphinx HTML whose FAQ gives the Python questions")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    rows = [json.loads(line) for line in (args.corpus / "chunks.jsonl").read_text().splitlines()]
    ids = [row["id"] for row in rows]
    matrix = np.load(args.corpus / "vectors.npy")
    query_sets = {"held_out_chunks": np.load(args.corpus / "query_vectors.npy"),
                  "python_questions": np.asarray(Embedder(MODEL).embed(questions_for(args.html, 190)),
                                                 dtype=np.float32)}
    results: dict = {"corpus": json.loads((args.corpus / "manifest.json").read_text()), "increments": []}
    server = EmbeddedFalkorDB(args.data_dir)
    try:
        with scratch_store(server, "grown") as store:
            results["index"] = {"M": store.hnsw_m, "efConstruction": store.ef_construction,
                                "efRuntime": store.ef_runtime}
            store.apply_schema(MODEL, matrix.shape[1])
            seed_parents(store)
            done = 0
            for package, size in increments([row["package"] for row in rows]):
                started = time.perf_counter()
                store.write_batches("upsert_chunks", chunk_rows(ids[done:size], matrix[done:size]))
                seconds = time.perf_counter() - started
                entry = {"package": package, "added": size - done, "size": size, "load_s": round(seconds, 1),
                         **scored(store, ids[:size], matrix[:size], query_sets)}
                results["increments"].append(entry)
                log.info("%s", json.dumps(entry))
                args.out.write_text(json.dumps(results, indent=1))
                done = size
            started = time.perf_counter()
            store.refresh_vector_indexes(("Chunk",), force=True)  # created again over the stored nodes
            results["rebuilt"] = {"size": done, "rebuild_s": round(time.perf_counter() - started, 1),
                                  **scored(store, ids, matrix, query_sets)}
            log.info("rebuilt: %s", json.dumps(results["rebuilt"]))
            args.out.write_text(json.dumps(results, indent=1))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
