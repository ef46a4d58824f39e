"""kg's retrieval latency in interleaved blocks, one process: variants are compared on the same machine state.

Sequential passes on this machine vary by ~3 ms (and by more from one day to the next), more than most
changes being measured, so each variant runs the questions as one block, round after round, and its p50 is
taken over all its blocks. Variants: fact tokens counted through the tokenizer's `encode_batch` (before
2026-11-26) or word by word (now), with question vectors precomputed or embedded before each retrieval, and
`uncut`: hop 2 returning every relation of its frontier, as it did before, instead of only those that can
still enter the kept facts. Latency excludes the question embedding and includes the `tokens` stage; the rows
each kg_entity_relations hop returned are counted too. The entry is appended to the
size's `retimed` list of the scale report:

    python benchmarks/kg_interleaved.py --data-dir /work/bench/scale-kg --out docs/benchmarks/scale_kg.json
"""

from __future__ import annotations

import argparse
import copy
import datetime
import json
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale import MODEL, questions_for

from neoweave.embeddings import Embedder
from neoweave.query import strategy
from neoweave.query.base import EVERY_RELATION, Strategy
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore

VARIANTS = ("encode_batch", "words", "words+embedding", "uncut")


def _variant_embedder(shared: Embedder, variant: str, vectors: dict[str, list[float]]) -> Embedder:
    embedder = Embedder(shared.model_name)
    embedder._model = shared._model  # one model in memory
    if variant == "encode_batch":
        backend = copy.deepcopy(shared._load().tokenizer).backend_tokenizer
        backend.no_truncation()
        backend.no_padding()
        embedder.count_tokens = lambda texts: [len(e.ids) for e in backend.encode_batch(texts, add_special_tokens=True)]
    if not variant.endswith("+embedding"):
        embedder.embed_query = vectors.__getitem__
    return embedder


def _retriever(store: FalkorDBStore, embedder: Embedder, variant: str, hop_rows: list[list[int]]) -> Strategy:
    """kg for `variant`; its kg_entity_relations hops add their row counts to the last list of `hop_rows`."""
    retriever = strategy("kg", store, embedder)
    if variant == "uncut":
        retriever._min_raw_score = lambda facts, hop: EVERY_RELATION  # type: ignore[method-assign]
    run = retriever._run

    def counting(trace, name, params, **kwargs):  # type: ignore[no-untyped-def]
        rows = run(trace, name, params, **kwargs)
        if name == "kg_entity_relations":
            hop_rows[-1].append(len(rows))
        return rows

    retriever._run = counting  # type: ignore[method-assign]
    return retriever


def _mean(values: list[int]) -> float:
    return round(statistics.mean(values), 1) if values else 0.0


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--data-dir", type=Path, required=True, help="the --data-dir of a scale.py run with --kg")
    parser.add_argument("--queries", type=int, default=190)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--out", type=Path, required=True, help="the scale report to append to")
    parser.add_argument("--note", help="conditions of the run, kept in the entry")
    args = parser.parse_args()
    if not (args.data_dir / "graph").is_dir():
        sys.exit(f"no scale graph under {args.data_dir}")
    shared = Embedder(MODEL)
    questions = questions_for(args.html, args.queries)
    vectors = {question: shared.embed_query(question) for question in questions}
    server = EmbeddedFalkorDB(args.data_dir / "graph")
    store = FalkorDBStore(server=server, graph="scale")
    try:
        hop_rows: dict[str, list[list[int]]] = {v: [[]] for v in VARIANTS}
        retrievers = {v: _retriever(store, _variant_embedder(shared, v, vectors), v, hop_rows[v]) for v in VARIANTS}
        for retriever in retrievers.values():
            retriever.retrieve(questions[0])  # the first statement after a server start waits for its load
        latency: dict[str, list[float]] = {v: [] for v in VARIANTS}
        tokens: dict[str, list[float]] = {v: [] for v in VARIANTS}
        blocks = []
        for _ in range(args.rounds):
            for variant, retriever in retrievers.items():
                block = []
                for question in questions:
                    hop_rows[variant].append([])
                    cost = retriever.retrieve(question).cost
                    block.append(cost.total_ms - cost.milliseconds.get("embed", 0.0))
                    tokens[variant].append(cost.milliseconds.get("tokens", 0.0))
                latency[variant] += block
                blocks.append({"variant": variant, "p50_ms": round(statistics.median(block), 2)})
        chunks = store.counts().nodes.get("Chunk", 0)
    finally:
        store.close()
        server.stop()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            check=False).stdout.strip()
    entry = {"date": datetime.date.today().isoformat(), "commit": commit, "kind": "kg interleaved blocks",
             "note": args.note, "questions": len(questions), "rounds": args.rounds, "blocks": blocks,
             "kg": {v: {"p50_ms": _p(latency[v], 0.5), "p95_ms": _p(latency[v], 0.95),
                        "tokens_p50_ms": _p(tokens[v], 0.5),
                        "mean_rows_per_hop": [_mean([rows[hop] for rows in hop_rows[v][1:] if len(rows) > hop])
                                              for hop in (0, 1)]} for v in VARIANTS}}
    print(json.dumps(entry, indent=1))
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"sizes": []}
    row = next((r for r in results["sizes"] if r["chunks"] == chunks), None)
    if row is None:
        row = {"size_target": chunks, "chunks": chunks}
        results["sizes"].append(row)
    row.setdefault("retimed", []).append(entry)
    args.out.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
