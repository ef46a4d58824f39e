"""Does the chunk vector index answer what exact cosine search over the stored vectors answers? Measured on a
built graph at any point of its history (`vector_agreement.sh` calls it after every write command).

    .venv/bin/python benchmarks/vector_agreement.py --data-dir D --qa examples/hotpotqa/qa.jsonl \\
        --stage "enrich kg" --out agreement.json      # appends one record per call

Reads every chunk vector of the graph (`chunk_embeddings_page`), embeds the questions with the graph's model and
compares, per question at k = 5 and 10, the index's top k with the exact top k (numpy over the stored vectors):
strictly (the exact ids) and tie-aware (a found chunk whose exact score is within 1e-6 of the exact k-th counts,
ann-benchmarks' rule; duplicate texts give equal vectors). Two answers are measured: `chunk_vector_search`,
the statement retrieval runs, and the raw index at several search breadths (`vector_search` with its fetch size
given, cut to k), with the p50 time of one query at each breadth: the breadth against latency trade-off of
`VECTOR_SEARCH_BREADTH`. The entity index the same way (`entity_vector_search`: `kg_entity_vector_search` by the
index, and as retrieval runs it, exactly below `store.exact_search_below`), at k = 5 and 10.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import neoweave  # noqa: E402
from neoweave.store.base import GraphStore  # noqa: E402

TIE = 1e-6


def stored_vectors(store: GraphStore, page: int = 2000, statement: str = "chunk_embeddings_page"
                   ) -> tuple[list[str], np.ndarray]:
    ids: list[str] = []
    vectors: list[list[float]] = []
    for rows in store.pages(statement, size=page, cursor="id"):
        ids += [row["id"] for row in rows]
        vectors += [row["embedding"] for row in rows]
    return ids, np.asarray(vectors, dtype=np.float32)


class Exact:
    """Exact cosine ranking of every stored chunk for each question, and how much of its top k an answer holds."""

    def __init__(self, ids: list[str], vectors: np.ndarray, queries: np.ndarray) -> None:
        self.scores = queries @ vectors.T
        self.order = np.argsort(-self.scores, axis=1, kind="stable")
        self.ids = ids
        self.position = {chunk_id: i for i, chunk_id in enumerate(ids)}

    def agreement(self, answers: list[list[str]], k: int) -> dict[str, float]:
        strict = tie_aware = 0
        for q, answer in enumerate(answers):
            exact = self.order[q, :k]
            found = [self.position[chunk_id] for chunk_id in answer[:k]]
            strict += len(set(found) & set(exact.tolist()))
            tie_aware += min(k, int((self.scores[q, found] >= self.scores[q, exact[-1]] - TIE).sum()))
        total = k * len(answers)
        return {"strict": round(strict / total, 4), "tie_aware": round(tie_aware / total, 4)}


def answers_of(store: GraphStore, statement: str, column: str, queries: np.ndarray, k: int) -> list[list[str]]:
    """Each query's top k ids by a retrieval statement taking `k` and `embedding`."""
    return [[row[column] for row in store.run(statement, {"k": k, "embedding": q.tolist()})] for q in queries]


def measure(store: GraphStore, queries: np.ndarray, exact: Exact, breadths: list[int]) -> dict:
    result: dict = {"chunk_vector_search": {}, "breadth": {}, "exact_search": store.searches_exactly(("Chunk",))}
    for k in (5, 10):
        answers = answers_of(store, "chunk_vector_search", "chunk_id", queries, k)
        result["chunk_vector_search"][f"k{k}"] = exact.agreement(answers, k)
    target = store.schema.vector_index("chunk_embedding")
    params = store._vector_params(target.name, target.label, target.property)
    for breadth in breadths:
        answers, times = [], []
        for q in queries:
            started = time.perf_counter()
            rows = store.run("vector_search", {**params, "fetch_k": breadth, "k": 10, "embedding": q.tolist(),
                                               "filter": {}})
            times.append((time.perf_counter() - started) * 1000)
            answers.append([row["id"] for row in rows])
        result["breadth"][str(breadth)] = {"p50_ms": round(statistics.median(times), 2),
                                           **{f"k{k}": exact.agreement(answers, k) for k in (5, 10)}}
    return result


def measure_entities(store: GraphStore, queries: np.ndarray) -> dict:
    """`kg_entity_vector_search` (entity linking's nearest names) by the index and exactly, against numpy over
    every stored entity vector."""
    ids, vectors = stored_vectors(store, statement="entity_embeddings_page")
    if not ids:
        return {}
    exact = Exact(ids, vectors, queries)
    result: dict = {"entities_embedded": len(ids), "exact_search": store.searches_exactly(("Entity",))}
    held = store.exact_search_below
    try:
        for way, threshold in (("index", 0), ("statement", held)):
            store.exact_search_below = threshold
            for k in (5, 10):
                answers = answers_of(store, "kg_entity_vector_search", "id", queries, k)
                result[f"{way}_k{k}"] = exact.agreement(answers, k)
    finally:
        store.exact_search_below = held
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--qa", type=Path, required=True, help="questions (qa.jsonl)")
    parser.add_argument("--stage", required=True, help="what the graph went through last, e.g. 'enrich kg'")
    parser.add_argument("--set", dest="set_name", default="", help="the question set's name in the record")
    parser.add_argument("--breadths", default="10,60,100,200,400,800")
    parser.add_argument("--out", type=Path, required=True, help="JSON list the record is appended to")
    args = parser.parse_args()
    questions = [json.loads(line)["question"] for line in args.qa.read_text().splitlines() if line.strip()]
    with neoweave.open(args.data_dir) as kb:
        ids, vectors = stored_vectors(kb.store)
        queries = np.asarray(kb.embedder.embed(questions), dtype=np.float32)
        exact = Exact(ids, vectors, queries)
        record = {"set": args.set_name, "stage": args.stage, "chunks": len(ids), "questions": len(questions),
                  "exact_kth_ties": round(float(np.mean(
                      exact.scores[np.arange(len(queries)), exact.order[:, 4]]
                      - exact.scores[np.arange(len(queries)), exact.order[:, 5]] < TIE)), 4),
                  **measure(kb.store, queries, exact, [int(b) for b in args.breadths.split(",")]),
                  "entity_vector_search": measure_entities(kb.store, queries)}
    records = json.loads(args.out.read_text()) if args.out.exists() else []
    records.append(record)
    args.out.write_text(json.dumps(records, indent=1) + "\n")
    print(json.dumps(record))


if __name__ == "__main__":
    main()
