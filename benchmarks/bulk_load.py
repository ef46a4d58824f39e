"""Bulk load: where FalkorDB's write time goes when chunk vectors are loaded, and which write path is fastest.

    .venv/bin/python benchmarks/bulk_load.py --data-dir /work/bench/scale --sizes 13422,100000 \\
        --out docs/benchmarks/bulk_load.json

Reads the vectors of the graph `benchmarks/scale.py` built in `--data-dir` (real MiniLM vectors of the Python
docs) and writes the first N of them into fresh graphs of the same server, one variant at a time:

- `text_only`: the rows as plain lists, no vector type, no vector index: what parameters travelling as
  text cost (the client formats them, the server parses them);
- `vecf32_no_index`: + conversion to the vector type;
- `ingest_path`: what ingest does (schema first, `upsert_chunks` in batches of 500, the HNSW index filled as
  rows arrive), at efConstruction 200 (the default) and 100 (Chroma's and Neo4j's default);
- `batch_2000`: the same with batches of 2,000 rows;
- `pipelined`: a thread formats batch n+1 while the server writes batch n;
- `index_after`: range indexes first, the vector index created after the load (FalkorDB builds it over the
  existing nodes in the background; timed until it is operational);
- `chroma`: Chroma's load of the same vectors into a fresh persistent collection (`pip install chromadb`;
  skipped without it), the issue's yardstick, in the same run.

Each variant reports seconds and chunks/s, and top-10 recall (strict and tie-aware) against exact search for
the scale benchmark's questions.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import (  # noqa: E402
    MODEL,
    ExactTop10,
    all_vectors,
    chroma_baseline,
    chunk_rows,
    load_as_ingest,
    questions_for,
    scratch_store,
    seed_parents,
    timed_search,
)

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402
from neoweave.store.falkordb_wire import params_header  # noqa: E402
from neoweave.store.values import batched  # noqa: E402

log = logging.getLogger("bulk_load")


def raw_rows(store: FalkorDBStore, ids: list[str], matrix: np.ndarray, convert: bool) -> None:
    """Rows straight through `UNWIND`, with or without the vector type: the cost of the text itself."""
    graph = store._graph_handle()
    graph.query("CREATE INDEX FOR (c:Chunk) ON (c.id)")
    value = "vecf32(row.embedding)" if convert else "row.embedding"
    for batch in batched(({"id": i, "embedding": v.tolist()} for i, v in zip(ids, matrix, strict=True)), 500):
        graph.query(params_header({"rows": batch}) +
                    f"UNWIND $rows AS row MERGE (c:Chunk {{id: row.id}}) SET c.embedding = {value}")


def pipelined(store: FalkorDBStore, ids: list[str], matrix: np.ndarray) -> None:
    store.apply_schema(MODEL, matrix.shape[1])
    seed_parents(store)
    graph = store._graph_handle()
    text = store.statement("upsert_chunks").text
    queries = (params_header({"rows": batch}) + text for batch in batched(chunk_rows(ids, matrix), store.batch_size))
    with ThreadPoolExecutor(1) as pool:
        upcoming = pool.submit(next, queries, None)
        while (query := upcoming.result()) is not None:
            upcoming = pool.submit(next, queries, None)
            graph.query(query)


def index_after(store: FalkorDBStore, ids: list[str], matrix: np.ndarray) -> None:
    steps = store.ddl(matrix.shape[1])
    vector_names = {v.name for v in store.schema.vector_indexes}
    for step in steps:
        if step.name not in vector_names:
            store._apply_step(step)
    seed_parents(store)
    store.write_batches("upsert_chunks", chunk_rows(ids, matrix))
    store.apply_schema(MODEL, matrix.shape[1])  # creates the vector indexes and waits until they serve


VARIANTS: dict[str, tuple[dict, Callable]] = {
    "text_only": ({}, lambda s, i, m: raw_rows(s, i, m, convert=False)),
    "vecf32_no_index": ({}, lambda s, i, m: raw_rows(s, i, m, convert=True)),
    "ingest_path": ({}, load_as_ingest),
    "ingest_path_ef_construction_100": ({"ef_construction": 100}, load_as_ingest),
    "batch_2000": ({"batch_size": 2000}, load_as_ingest),
    "pipelined": ({}, pipelined),
    "index_after": ({}, index_after),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the scale benchmark's --data-dir")
    parser.add_argument("--sizes", default="13422")
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"),
                        help="Sphinx HTML whose FAQ gives the questions")
    parser.add_argument("--variants", default=",".join([*VARIANTS, "chroma"]))
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    unknown = set(args.variants.split(",")) - set(VARIANTS) - {"chroma"}
    if unknown:
        sys.exit(f"unknown --variants {sorted(unknown)}; choose from {[*VARIANTS, 'chroma']}")
    embedder = Embedder(MODEL)
    queries = np.asarray(embedder.embed(questions_for(args.html, 190)), dtype=np.float32)
    server = EmbeddedFalkorDB(args.data_dir / "graph")
    source = FalkorDBStore(server=server, graph="scale")
    all_ids, all_matrix = all_vectors(source)
    source.close()
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"sizes": {}}
    try:
        for size in (int(s) for s in args.sizes.split(",")):
            ids, matrix = all_ids[:size], all_matrix[:size]
            exact = ExactTop10(matrix, ids, queries)
            row = results["sizes"].setdefault(str(len(ids)), {})
            for name in args.variants.split(","):
                if name == "chroma":
                    row[name] = chroma_baseline(ids, matrix, queries, exact)
                    log.info("%d chunks, chroma: %s", len(ids), row[name])
                    args.out.write_text(json.dumps(results, indent=1))
                    continue
                options, load = VARIANTS[name]
                with scratch_store(server, "bulk", **options) as store:
                    started = time.perf_counter()
                    load(store, ids, matrix)
                    seconds = time.perf_counter() - started
                    row[name] = {"seconds": round(seconds, 1), "chunks_per_s": round(len(ids) / seconds)}
                    if name not in ("text_only", "vecf32_no_index"):
                        row[name] |= exact.report(timed_search(store, queries)[1])
                log.info("%d chunks, %s: %s", len(ids), name, row[name])
                args.out.write_text(json.dumps(results, indent=1))
    finally:
        server.stop()


if __name__ == "__main__":
    main()
