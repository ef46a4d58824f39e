"""Ingest throughput: end-to-end chunks/s against raw embedding throughput of the same chunks.

    python benchmarks/ingest.py [--html /usr/share/doc/python3.11/html] [--jsonl ../shared/data/hotpotqa/corpus.jsonl]

Each corpus is ingested into a fresh embedded store (a temporary data directory). Then the very chunks that
were written are embedded again with the same model and batch size, with nothing else running: the raw
throughput. The target is end-to-end >= 90% of raw (parsing, splitting, writing and indexing hidden behind
embedding). Peak resident memory of the process is reported too (documents are streamed, not held).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def run(name: str, path: Path, embedder: Embedder, batch: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="neoweave-bench-") as data_dir:
        server = EmbeddedFalkorDB(Path(data_dir))
        store = FalkorDBStore(server=server, graph="bench")
        try:
            ingestor = Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=True,
                                                               embed_batch_chunks=batch))
            report = ingestor.ingest(path)
            rss_after_ingest = peak_rss_mb()
            texts = [row["text"] for row in store.query("MATCH (c:Chunk) RETURN c.text AS text ORDER BY c.id")]
        finally:
            store.close()
            server.stop()
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start:start + batch])
    raw_seconds = time.perf_counter() - started
    raw = len(texts) / raw_seconds
    return {
        "corpus": name, "documents": report.documents_new, "sections": report.sections, "chunks": report.chunks,
        "links_resolved": report.links_resolved, "links_unresolved": report.links_unresolved,
        "skipped": len(report.skipped), "ingest_seconds": round(report.seconds, 1),
        "end_to_end_chunks_per_s": round(report.chunks_per_second, 1),
        "raw_embedding_chunks_per_s": round(raw, 1),
        "ratio": round(report.chunks_per_second / raw, 3), "peak_rss_mb": round(rss_after_ingest),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--jsonl", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa" / "corpus.jsonl")
    parser.add_argument("--batch", type=int, default=256, help="chunks per embedding call")
    parser.add_argument("--out", type=Path, default=None, help="write results as JSON")
    args = parser.parse_args()
    embedder = Embedder("all-MiniLM-L6-v2")
    embedder.embed(["warm up"])  # load the model before timing anything
    results = []
    for name, path in (("hotpotqa corpus.jsonl", args.jsonl), ("Python 3.11 docs (HTML)", args.html)):
        if not path.exists():
            print(f"skipping {name}: {path} not found", file=sys.stderr)
            continue
        results.append(run(name, path, embedder, args.batch))
        print(json.dumps(results[-1]), flush=True)
    print("\n| corpus | docs | chunks | links resolved / unresolved | ingest s | end-to-end chunks/s "
          "| raw embedding chunks/s | ratio | peak RSS MB |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in results:
        print(f"| {r['corpus']} | {r['documents']} | {r['chunks']} | {r['links_resolved']} / "
              f"{r['links_unresolved']} | {r['ingest_seconds']} | {r['end_to_end_chunks_per_s']} | "
              f"{r['raw_embedding_chunks_per_s']} | {r['ratio']:.0%} | {r['peak_rss_mb']} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
