"""What updating nodes does to FalkorDB's HNSW index, and the search breadth that undoes it.

    .venv/bin/python benchmarks/vector_updates.py --work /tmp/vector-updates --chunks 7000 --rounds 8 \\
        --out docs/benchmarks/vector_updates.json

FalkorDB re-inserts a node's vector into HNSW on any update of the node, and every enrich step marks the chunks
it processed (`mark_chunks_enriched`), so after `enrich kg` every chunk vector of a graph has been re-inserted.
This loads `--chunks` paragraphs of the Python 3.11 library docs (Debian's python3.11-doc, MiniLM vectors,
cached in `--work`) the way ingest writes chunks, then marks every chunk `--rounds` times as enrich steps do,
and after the load and each round compares the index's top 5 and 10 with exact cosine search over the same
vectors (tie-aware: a found chunk within 1e-6 of the exact k-th counts) at several search breadths (neighbours
asked for, cut to k), with the p50 time of one query. Questions: the Python FAQ's (plus 16 user questions,
`scale.questions_for`) and 100 held-out paragraphs. Run it alone: the times are p50s.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from scale import MODEL, load_as_ingest, questions_for, scratch_store  # noqa: E402

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402

DOCS = Path("/usr/share/doc/python3.11/html")
BREADTHS = (10, 60, 100, 200, 400, 800)
HELD_OUT = 100


def paragraphs() -> list[str]:
    """The distinct paragraphs of at least 60 characters of the library reference, in file order."""
    texts = []
    for page in sorted((DOCS / "library").glob("*.html")):
        for paragraph in re.findall(r"<p>(.*?)</p>", page.read_text(errors="ignore"), re.S):
            text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", "", paragraph))).strip()
            if len(text) >= 60:
                texts.append(text)
    return list(dict.fromkeys(texts))


def vectors(work: Path, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The corpus vectors and the query vectors (questions, then held-out paragraphs), embedded once."""
    cache = work / f"vectors-{count}.npz"
    if not cache.exists():
        texts = paragraphs()
        picked = np.random.default_rng(0).permutation(len(texts))
        corpus = [texts[i] for i in picked[:count]]
        held_out = [texts[i] for i in picked[count:count + HELD_OUT]]
        embedder = Embedder(MODEL)
        questions = questions_for(DOCS, 190)
        np.savez(cache, corpus=np.asarray(embedder.embed(corpus), dtype=np.float32),
                 queries=np.asarray(embedder.embed(questions + held_out), dtype=np.float32))
    loaded = np.load(cache)
    return loaded["corpus"], loaded["queries"]


def measure(store: FalkorDBStore, queries: np.ndarray, scores: np.ndarray, order: np.ndarray) -> dict:
    target = store.schema.vector_index("chunk_embedding")
    params = store._vector_params(target.name, target.label, target.property)
    result = {}
    for breadth in BREADTHS:
        found, times = [], []
        for query in queries:
            started = time.perf_counter()
            rows = store.run("vector_search", {**params, "fetch_k": breadth, "k": 10, "embedding": query.tolist(),
                                               "filter": {}})
            times.append((time.perf_counter() - started) * 1000)
            found.append([int(row["id"][1:]) for row in rows])
        row = {"p50_ms": round(statistics.median(times), 2)}
        for k in (5, 10):
            hits = sum(min(k, int((scores[q, f[:k]] >= scores[q, order[q, k - 1]] - 1e-6).sum()))
                       for q, f in enumerate(found))
            row[f"k{k}_tie_aware"] = round(hits / (k * len(queries)), 4)
        result[str(breadth)] = row
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, required=True, help="scratch directory (vectors cache, store)")
    parser.add_argument("--chunks", type=int, default=7000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    corpus, queries = vectors(args.work, args.chunks)
    ids = [f"c{i:06d}" for i in range(len(corpus))]
    scores = queries @ corpus.T
    order = np.argsort(-scores, axis=1, kind="stable")
    report = {"chunks": len(ids), "queries": len(queries), "model": MODEL, "stages": {}}
    server = EmbeddedFalkorDB(args.work / f"data-{time.time():.0f}")
    server.ensure_running()
    try:
        with scratch_store(server, "updates") as store:
            load_as_ingest(store, ids, corpus)
            report["stages"]["ingest"] = measure(store, queries, scores, order)
            print("ingest", json.dumps(report["stages"]["ingest"]), flush=True)
            for number in range(1, args.rounds + 1):
                store.write_batches("mark_chunks_enriched", [
                    {"id": chunk_id, "prefix": "step@", "signature": f"step@{number}"} for chunk_id in ids])
                report["stages"][f"marked {number}x"] = measure(store, queries, scores, order)
                print(f"marked {number}x", json.dumps(report["stages"][f"marked {number}x"]), flush=True)
    finally:
        server.stop()
    args.out.write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
