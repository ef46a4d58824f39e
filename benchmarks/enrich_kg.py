"""Throughput of `enrich kg --method fast` on a whole corpus: extraction, writes and each graph-wide phase.

    python benchmarks/enrich_kg.py --data-dir /tmp/pydocs --html /usr/share/doc/python3.11/html \
        --base-url https://docs.python.org/3.11/ --out docs/benchmarks/enrich_kg_python_docs.json
    python benchmarks/enrich_kg.py --data-dir /tmp/hotpot --jsonl ../shared/data/hotpotqa/corpus.jsonl \
        --out docs/benchmarks/enrich_kg_hotpotqa.json

The corpus is ingested into the given data directory first (skipped when unchanged), then every chunk is
enriched from scratch (`--keep` resumes instead). The target of the entity-layer issue: the Python 3.11
docs (13.4k chunks) in at most 13 minutes on 2 cores. Peak RSS of this process is reported too.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.enrich import run  # noqa: E402
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--html", type=Path)
    parser.add_argument("--jsonl", type=Path)
    parser.add_argument("--base-url")
    parser.add_argument("--keep", action="store_true", help="resume: do not clear earlier kg results")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    corpus = args.html or args.jsonl
    if corpus is None:
        parser.error("give --html DIR or --jsonl FILE")
    embedder = Embedder("all-MiniLM-L6-v2")
    embedder.dimension  # noqa: B018 - load before timing
    store = FalkorDBStore(server=EmbeddedFalkorDB(args.data_dir))
    started = time.perf_counter()
    options = IngestOptions(sources=SourceOptions(base_url=args.base_url) if args.base_url else SourceOptions())
    ingest_report = Ingestor(store, embedder, options).ingest(corpus)
    ingest_seconds = time.perf_counter() - started
    if not args.keep:  # from scratch: forget every kg derivation and signature
        store.query("MATCH (e:Entity) DETACH DELETE e", write=True)
        store.query("MATCH (m:EntityMerge) DETACH DELETE m", write=True)
        store.query("MATCH ()-[l:LINKS_TO {method: 'inferred'}]->() DELETE l", write=True)
        store.query("MATCH (c:Chunk) SET c.enriched = [], c.titles_scanned = null", write=True)
        store.query("MATCH (s:Section) SET s.titles_scanned = null, s.inferred_pending = null", write=True)
    report = run("kg", store, embedder=embedder, progress=True)
    counts = store.counts()
    result = {
        "corpus": str(corpus), "chunks": counts.nodes.get("Chunk", 0), "ingest_seconds": round(ingest_seconds, 1),
        "ingest": {k: v for k, v in ingest_report.as_dict().items() if isinstance(v, (int, float))},
        "enrich": report.as_dict(), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
    }
    print(json.dumps(result, indent=2))
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    store.close()


if __name__ == "__main__":
    main()
