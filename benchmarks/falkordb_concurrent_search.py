"""Do vector searches that overlap in time answer as the same searches one at a time? Per FalkorDB module, with
and without the store's search gate (`FalkorDBStore._search_gate`, which sends vector-index statements one at
a time, across the processes of a data directory).

    .venv/bin/python benchmarks/falkordb_concurrent_search.py [--module auto|bundled|PATH] [--unlocked]
        [--docs 300] [--threads 8] [--rounds 100]

Ingests the first `--docs` records of the shipped HotpotQA corpus into a fresh embedded server in a temporary
directory, takes each question's top 5 chunks one at a time, then runs `--threads` threads of `--rounds` searches
each and counts the answers that differ. FalkorDB answers overlapping HNSW queries wrongly (duplicated nodes
displace neighbours: FalkorDB/FalkorDB#2848); the lock is what keeps neoweave's answers exact. Results:
docs/benchmarks/small_writes.md ("Concurrent vector searches").
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import tempfile
import threading
import time
from pathlib import Path

from neoweave.embeddings import Embedder
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "examples/hotpotqa/corpus.jsonl"
QA = ROOT / "examples/hotpotqa/qa.jsonl"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", default="auto", help="falkordb.module: auto, bundled or a path")
    parser.add_argument("--unlocked", action="store_true", help="let this process's vector searches overlap")
    parser.add_argument("--docs", type=int, default=300)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=100, help="searches per thread")
    parser.add_argument("--questions", type=int, default=8)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        server = EmbeddedFalkorDB(Path(tmp) / "db", module=args.module)
        store = FalkorDBStore(server=server, graph="concurrent_search")
        try:
            if args.unlocked:
                store._search_gate = contextlib.nullcontext()  # type: ignore[assignment]
            corpus = Path(tmp) / "corpus.jsonl"
            with CORPUS.open(encoding="utf-8") as source:
                corpus.write_text("".join(itertools.islice(source, args.docs)), encoding="utf-8")
            embedder = Embedder("all-MiniLM-L6-v2").load()
            Ingestor(store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(corpus)
            with QA.open(encoding="utf-8") as qa:
                questions = [json.loads(line)["question"] for line in itertools.islice(qa, args.questions)]
            vectors = dict(zip(questions, embedder.embed(questions), strict=True))

            def search(question: str) -> list[str]:
                rows = store.run("chunk_vector_search", {"k": 5, "embedding": vectors[question]})
                return [row["chunk_id"] for row in rows]

            expected = {question: search(question) for question in questions}
            wrong: list[str] = []

            def worker(offset: int) -> None:
                for n in range(args.rounds):
                    question = questions[(offset + n) % len(questions)]
                    if search(question) != expected[question]:
                        wrong.append(question)

            threads = [threading.Thread(target=worker, args=(i,)) for i in range(args.threads)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            seconds = time.perf_counter() - started
            total = args.threads * args.rounds
            print(json.dumps({"module": store.module_version(), "locked": not args.unlocked, "docs": args.docs,
                              "threads": args.threads, "searches": total, "wrong": len(wrong),
                              "ms_per_search": round(1000 * seconds / total, 2)}))
        finally:
            store.close()
            server.stop()


if __name__ == "__main__":
    main()
