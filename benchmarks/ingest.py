"""Ingest throughput: end-to-end chunks/s against raw embedding throughput of the same chunks.

    python benchmarks/ingest.py [--html /usr/share/doc/python3.11/html] [--jsonl ../shared/data/hotpotqa/corpus.jsonl]

Each corpus is ingested into a fresh embedded store (a temporary data directory). The very chunks that
ingest writes are also embedded on their own with the same model and batch size, once before and once
after the ingest (their mean is the raw throughput, which evens out drift of a shared machine). The target
is end-to-end >= 90% of raw (parsing, splitting, writing and indexing hidden behind embedding). Peak
resident memory of the process is reported too (documents are streamed, not held).
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
from neoweave.ingest.chunking import Chunker  # noqa: E402
from neoweave.ingest.documents import Document  # noqa: E402
from neoweave.ingest.sources import iter_documents  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def chunk_texts(path: Path) -> list[str]:
    """The chunks ingest will embed, from the same loaders and chunker (for the raw measurement)."""
    options = IngestOptions()
    settings = {fmt: {} for fmt in ("html", "text", "markdown", "record")}
    chunkers = {fmt: Chunker(options.chunking(fmt)) for fmt in settings}
    return [chunk.text for doc in iter_documents(path, SourceOptions(), settings) if isinstance(doc, Document)
            for chunk in chunkers[doc.format].chunk(doc).chunks]


def raw_throughput(embedder: Embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start:start + batch])
    return len(texts) / (time.perf_counter() - started)


def run(name: str, path: Path, embedder: Embedder, batch: int) -> dict:
    texts = chunk_texts(path)
    raw_before = raw_throughput(embedder, texts, batch)
    with tempfile.TemporaryDirectory(prefix="neoweave-bench-") as data_dir:
        server = EmbeddedFalkorDB(Path(data_dir))
        store = FalkorDBStore(server=server, graph="bench")
        try:
            ingestor = Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=True,
                                                               embed_batch_chunks=batch))
            report = ingestor.ingest(path)
            rss_after_ingest = peak_rss_mb()
        finally:
            store.close()
            server.stop()
    assert report.chunks == len(texts), (report.chunks, len(texts))
    raw = (raw_before + raw_throughput(embedder, texts, batch)) / 2  # before and after: machine drift
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
