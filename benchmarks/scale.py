"""Scale: how big, how fast. Graphs grown to each of `--sizes` chunks from real documents repeated with
variation, measured at each size against Chroma on the same vectors and queries.

    .venv/bin/python benchmarks/scale.py --data-dir /tmp/scale --sizes 10000,30000,100000 \\
        --out docs/benchmarks/scale.json

Corpus: the Python 3.11 docs (Debian's python3.11-doc, ~13.4k chunks with ~42k internal links), copied as
often as a size needs. Copy n is published under its own base URL (links stay inside the copy) and every
paragraph of it starts with a marker naming the copy, so each chunk is a distinct text with its own
embedding. The graph grows in increments (cumulative), so the largest size's build is the sum of its
increments. Per size:

1. ingest of the increment: end-to-end chunks/s against raw embedding throughput of a sample of the same
   chunks, embedded alone with the same model and batch before and after (target >= 90 %); RSS of this
   process and of the FalkorDB server sampled every 2 s (the memory curve: streaming holds);
2. the vector index at each `--ef` value (rebuilt: its build time), then top-10 latency p50/p95 of
   `--queries` questions through the naive path's statement and recall@10 against exact search (numpy over
   every stored vector);
3. naive and larag retrieval p50/p95 excluding the question's embedding, each over the questions twice: first
   use, then the repeat (steady state: LARAG's link contexts embedded); larag also over authored links only.
   With `--kg`, which first runs `enrich kg` over the whole graph: kg and ppr (k 5) over the store, the walk
   index built (time, bytes), then both over the index, first pass and repeat;
4. Chroma (`pip install chromadb`): the same vectors loaded into a fresh persistent collection (HNSW,
   cosine, its defaults M 16 / ef_construction 100), its load time, top-10 p50/p95 and recall@10, beside
   FalkorDB's own bulk load of the same vectors into an empty graph with its index (efConstruction 200, the
   default, and 100 as Chroma builds), top-10 p50/p95 and recall@10 at the default ef_runtime.

Interrupted runs resume on the same `--data-dir`: a copy ingested whole is recorded in `increments/`, a
copy cut short is finished by the incremental ingest (its increment says `resumed`), and `enrich kg`
continues with the chunks it has not done (`kg_enrich_chunks` says how many this run did). `--build-only`
builds the largest size (with `--kg`, enriched) and stops: the long build may share the machine, and a later
run of the same command without it measures alone (the build's ingest and enrich times are those it recorded,
so read them as taken on a shared machine when it was).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import FalkorDBSettings  # noqa: E402
from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.eval.metrics import percentile  # noqa: E402
from neoweave.eval.sphinx_faq import build_sphinx_faq  # noqa: E402
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions  # noqa: E402
from neoweave.query import strategy  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402

log = logging.getLogger("scale")
MODEL = "all-MiniLM-L6-v2"
BASE_URL = "https://docs.python.org/3.11/"
QUESTIONS = [  # what users of the Python docs ask; the FAQ's questions follow (`questions_for`)
    "How do I cancel a running asyncio task?", "What does the cyclic garbage collector do?",
    "How do I read a file line by line?", "What is the difference between a list and a tuple?",
    "How do I sort a dictionary by value?", "How are default argument values evaluated?",
    "What does the global interpreter lock protect?", "How do I format a float with two decimals?",
    "How do I run a subprocess and capture its output?", "What is a context manager?",
    "How do I create a virtual environment?", "How does the import system find modules?",
    "What does functools.lru_cache do?", "How do I parse command line arguments?",
    "How do I compare two floats for equality?", "What are the rules for local and global variables?",
]


def copy_docs(source: Path, target: Path, copy: int) -> Path:
    """The docs tree with every paragraph marked as copy `copy` (a distinct text, the same structure)."""
    destination = target / f"copy{copy}"
    if destination.exists():
        return destination
    marker = f"<p>[copy {copy}] "
    for path in source.rglob("*"):
        relative = path.relative_to(source)
        out = destination / relative
        if path.is_dir():
            out.mkdir(parents=True, exist_ok=True)
        elif path.suffix == ".html":
            out.parent.mkdir(parents=True, exist_ok=True)
            text = path.read_text(encoding="utf-8", errors="replace")
            out.write_text(re.sub(r"<p>", marker, text) if copy else text, encoding="utf-8")
    return destination


class MemorySampler:
    """RSS (MB) of this process and of the graph server every `interval` seconds, while ingest runs."""

    def __init__(self, server_pid: int | None, interval: float = 2.0) -> None:
        self.processes = {"neoweave": psutil.Process()}
        if server_pid:
            self.processes["falkordb"] = psutil.Process(server_pid)
        self.interval = interval
        self.samples: list[dict] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self.started = time.perf_counter()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            row = {"s": round(time.perf_counter() - self.started, 1)}
            for name, process in self.processes.items():
                with contextlib.suppress(psutil.Error):
                    row[f"{name}_rss_mb"] = round(process.memory_info().rss / 2**20)
            self.samples.append(row)

    def __enter__(self) -> MemorySampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def raw_throughput(embedder: Embedder, texts: list[str], batch: int) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), batch):
        embedder.embed(texts[start:start + batch])
    return len(texts) / (time.perf_counter() - started)


def sample_texts(store: FalkorDBStore, copy: int, count: int) -> list[str]:
    rows = store.query("MATCH (c:Chunk) WHERE c.doc_id STARTS WITH $prefix RETURN c.text AS text LIMIT $n",
                       {"prefix": f"{BASE_URL}copy{copy}/", "n": count})
    return [row["text"] for row in rows]


def all_vectors(store: FalkorDBStore, page: int = 2000) -> tuple[list[str], np.ndarray]:
    ids: list[str] = []
    vectors: list[list[float]] = []
    after = ""
    while True:
        rows = store.run("chunk_embeddings_page", {"after": after, "limit": page})
        if not rows:
            break
        ids += [row["id"] for row in rows]
        vectors += [row["embedding"] for row in rows]
        after = rows[-1]["id"]
    return ids, np.asarray(vectors, dtype=np.float32)


TIE_EPSILON = 1e-3  # ann-benchmarks' recall tolerance: a found vector within 1e-3 of the 10th distance counts


class ExactTop10:
    """Exact top-10 by cosine (numpy over every stored vector) and recall@10 of an index's answers against it.

    Strict recall counts the exact ten ids only. The corpus repeats each document in several copies, so a
    top-10 often ends in near-twins whose scores differ in the fourth decimal, and which of them an index
    returns is a coin toss; `recall(found, TIE_EPSILON)` counts a found vector whose exact score is within
    the tolerance of the 10th, as ann-benchmarks does (`threshold = 10th distance + epsilon`)."""

    def __init__(self, matrix: np.ndarray, ids: list[str], queries: np.ndarray) -> None:
        self.scores = queries @ matrix.T
        order = np.argsort(-self.scores, axis=1)[:, :11]
        self.ids = [[ids[i] for i in row[:10]] for row in order]
        rows = np.arange(len(queries))
        self.tenth = self.scores[rows, order[:, 9]]
        self.eleventh = self.scores[rows, order[:, 10]] if matrix.shape[0] > 10 else self.tenth - 1.0
        self.position = {chunk_id: i for i, chunk_id in enumerate(ids)}

    def recall(self, found: list[list[str]], epsilon: float = 0.0) -> float:
        if not epsilon:
            return statistics.fmean(len(set(f[:10]) & set(e)) / 10 for f, e in zip(found, self.ids, strict=True))
        per_query = []
        for q, answer in enumerate(found):
            scores = self.scores[q, [self.position[chunk_id] for chunk_id in answer[:10]]]
            per_query.append(min(10, int((scores >= self.tenth[q] - epsilon).sum())) / 10)
        return statistics.fmean(per_query)

    def near_tie_share(self, epsilon: float = TIE_EPSILON) -> float:
        """Share of queries whose 10th and 11th exact scores differ by less than `epsilon`."""
        return float(np.mean(self.tenth - self.eleventh < epsilon))

    def report(self, found: list[list[str]]) -> dict:
        return {"recall_at_10": round(self.recall(found), 4),
                "recall_at_10_tie_aware": round(self.recall(found, TIE_EPSILON), 4)}


def questions_for(html: Path, count: int) -> list[str]:
    """Distinct real questions: the user questions above, then the Python FAQ's own (174 in 3.11)."""
    with tempfile.TemporaryDirectory(prefix="scale-faq-") as folder:
        faq = build_sphinx_faq(html, folder)
        asked = [json.loads(line)["question"] for line in faq.qa_path.read_text().splitlines()]
    return list(dict.fromkeys(QUESTIONS + asked))[:count]


def timed_search(store: FalkorDBStore, queries: np.ndarray) -> tuple[list[float], list[list[str]]]:
    latencies, found = [], []
    for vector in queries:
        started = time.perf_counter()
        rows = store.run("chunk_vector_search", {"k": 10, "embedding": vector.tolist()})
        latencies.append((time.perf_counter() - started) * 1000)
        found.append([row["chunk_id"] for row in rows])
    return latencies, found


def summary(values: list[float]) -> dict:
    return {"p50_ms": round(percentile(values, 50), 2), "p95_ms": round(percentile(values, 95), 2)}


def strategy_latency(store, embedder, name: str, questions: list[str], **parameters) -> dict:
    chosen = strategy(name, store, embedder, **parameters)
    chosen.retrieve(questions[0])  # warm
    excluding_embedding = []
    for question in questions:
        result = chosen.retrieve(question)
        excluding_embedding.append(result.cost.total_ms - result.cost.milliseconds.get("embed", 0.0))
    return summary(excluding_embedding)


def retrieval_latencies(store, embedder, questions: list[str], *, kg: bool) -> dict:
    """Each strategy over the questions twice: the first pass pays first-use work (LARAG embeds and stores the
    link contexts it meets), the repeat is the steady state of a graph whose link contexts are embedded
    (`ingest --link-contexts`). larag_authored follows only authored links (no inferred ones from enrich kg)."""
    if kg:
        return walk_latencies(store, embedder, questions)
    runs = (("naive", "naive", {"k": 5}), ("larag", "larag", {"k": 5}),
            ("larag_authored", "larag", {"k": 5, "links": "authored"}))
    timings = {}
    for label, name, parameters in runs:
        timings[label] = strategy_latency(store, embedder, name, questions, **parameters)
        timings[f"{label}_repeat"] = strategy_latency(store, embedder, name, questions, **parameters)
    return timings


def walk_latencies(store, embedder, questions: list[str]) -> dict:
    """kg and ppr (k 5) over the store (a statement per hop), then the walk index built (timed, its bytes and
    this process's resident memory before and after), then both over the index: first pass and repeat."""
    from neoweave.query.walk_index import WalkIndexes

    timings = {}
    for name in ("kg", "ppr"):
        timings[f"{name}_store"] = strategy_latency(store, embedder, name, questions, k=5, walk_index="store")
    before = psutil.Process().memory_info().rss
    started = time.perf_counter()
    index = WalkIndexes.of(store).current(build=True)
    built = time.perf_counter() - started
    if index is None:  # a graph without a write stamp
        timings["walk_index"] = {"skipped": "the graph has no write stamp"}
        return timings
    timings["walk_index"] = {"build_s": round(built, 1), "mb": round(index.nbytes() / 2**20, 1),
                             "process_rss_growth_mb": round((psutil.Process().memory_info().rss - before) / 2**20),
                             **{key: value for key, value in index.describe().items() if key != "bytes"}}
    for name in ("kg", "ppr"):
        timings[name] = strategy_latency(store, embedder, name, questions, k=5, walk_index="auto")
        timings[f"{name}_repeat"] = strategy_latency(store, embedder, name, questions, k=5, walk_index="auto")
    return timings


def chroma_baseline(ids: list[str], matrix: np.ndarray, queries: np.ndarray, exact: ExactTop10) -> dict:
    try:
        import chromadb
    except ImportError:
        return {"skipped": "pip install chromadb"}
    folder = tempfile.mkdtemp(prefix="scale-chroma-")
    try:
        client = chromadb.PersistentClient(path=folder)
        collection = client.create_collection("chunks", metadata={"hnsw:space": "cosine"})
        started = time.perf_counter()
        batch = 5000
        for start in range(0, len(ids), batch):
            collection.add(ids=ids[start:start + batch], embeddings=matrix[start:start + batch])
        load_s = time.perf_counter() - started
        latencies, found = [], []
        for vector in queries:
            began = time.perf_counter()
            result = collection.query(query_embeddings=[vector], n_results=10)
            latencies.append((time.perf_counter() - began) * 1000)
            found.append(result["ids"][0])
        return {"load_s": round(load_s, 1), **summary(latencies), **exact.report(found)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def chunk_rows(ids: list[str], matrix: np.ndarray) -> Iterator[dict]:
    """Chunk rows for `upsert_chunks` carrying only an id and a vector, under one section of one document."""
    for i, (chunk_id, vector) in enumerate(zip(ids, matrix, strict=True)):
        yield {"id": chunk_id, "doc_id": "bulk", "section_id": "bulk#s", "text": "", "order": i, "start": 0,
               "end": 0, "token_count": 0, "external_links_json": "[]", "embedding": vector.tolist()}


def seed_parents(store: FalkorDBStore) -> None:
    """The document and section `chunk_rows` hang under."""
    store.write_batches("upsert_documents", [{"id": "bulk", "props": {"id": "bulk", "title": "bulk"}}])
    store.write_batches("upsert_sections", [{"id": "bulk#s", "doc_id": "bulk",
                                             "props": {"id": "bulk#s", "doc_id": "bulk", "title": "bulk"}}])


@contextlib.contextmanager
def scratch_store(server: EmbeddedFalkorDB, graph: str, **options) -> Iterator[FalkorDBStore]:
    """A store on an emptied graph, deleted afterwards; indexes go with it (HNSW options are fixed when an
    index is created, so each configuration needs a fresh graph)."""
    store = FalkorDBStore(server=server, graph=graph, **options)
    store.exact_search_below = 0  # the index is what these measure, at every size
    try:
        with contextlib.suppress(Exception):
            store._graph_handle().delete()
        yield store
    finally:
        with contextlib.suppress(Exception):
            store._graph_handle().delete()
        store.close()


def load_as_ingest(store: FalkorDBStore, ids: list[str], matrix: np.ndarray) -> None:
    """The vectors written the way ingest writes them: schema first (MERGE finds chunks by their range index
    and each vector enters HNSW as it is written), parents, then chunks through `upsert_chunks` in batches."""
    store.apply_schema(MODEL, matrix.shape[1])
    seed_parents(store)
    store.write_batches("upsert_chunks", chunk_rows(ids, matrix))


def falkordb_bulk_load(server: EmbeddedFalkorDB, ids: list[str], matrix: np.ndarray, ef: int,
                       ef_construction: int, queries: np.ndarray, exact: ExactTop10) -> dict:
    """The same vectors into an empty graph the way ingest writes them (`load_as_ingest`), then top-10
    recall: FalkorDB's side of the load-time comparison with Chroma.

    Writing first and indexing after is slower here: without the id index every MERGE scans the chunks
    (35 s for 13.4k in the first run of this benchmark), and FalkorDB's build over existing vectors is no
    faster than its inserts (docs/scaling.md)."""
    with scratch_store(server, "bulk", ef_runtime=ef, ef_construction=ef_construction) as store:
        started = time.perf_counter()
        load_as_ingest(store, ids, matrix)
        loaded = time.perf_counter() - started
        latencies, found = timed_search(store, queries)
        return {"ef_construction": ef_construction, "load_and_index_s": round(loaded, 1), **summary(latencies),
                **exact.report(found)}


def enrich_kg_recorded(store: FalkorDBStore, embedder: Embedder, data_dir: Path) -> dict:
    """`enrich kg` over the graph, its time and chunk count recorded in `increments/kg-<chunks>.json`; when it
    had nothing left to do (a `--build-only` run enriched this graph), what that run recorded."""
    from neoweave.enrich import run

    chunks = store.counts().nodes.get("Chunk", 0)
    marker = data_dir / "increments" / f"kg-{chunks}.json"
    report = run("kg", store, embedder=embedder, progress=False)
    if not report.chunks and marker.is_file():
        return json.loads(marker.read_text())
    recorded = {"chunks": report.chunks, "seconds": round(report.seconds, 1)}
    if report.chunks:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(json.dumps(recorded))
    log.info("enrich kg: %s", recorded)
    return recorded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--html", type=Path, default=Path("/usr/share/doc/python3.11/html"))
    parser.add_argument("--data-dir", type=Path, required=True, help="graph and copies (kept: reruns resume)")
    parser.add_argument("--sizes", default="10000,30000,100000")
    parser.add_argument("--ef", default="10,50,100,200", help="ef_runtime values measured at each size")
    parser.add_argument("--queries", type=int, default=190, help="distinct questions (at most 190)")
    parser.add_argument("--sample", type=int, default=1000, help="chunks embedded alone for raw throughput")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--kg", action="store_true", help="also enrich kg and time the kg strategy")
    parser.add_argument("--no-chroma", action="store_true")
    parser.add_argument("--no-bulk", action="store_true", help="skip FalkorDB's bulk load of the same vectors")
    parser.add_argument("--build-only", action="store_true",
                        help="ingest (and with --kg enrich) up to the largest size, then stop: a later run, alone "
                             "on the machine, measures the graph this one built")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if not args.html.is_dir():
        sys.exit(f"{args.html} not found (apt-get install python3.11-doc)")
    sizes = [int(s) for s in args.sizes.split(",")]
    defaults = FalkorDBSettings()  # what a user gets: the targets are measured at these
    # the default ef_runtime last, so the graph is left indexed as a user's is for the strategies' timing
    efs = [*sorted({int(e) for e in args.ef.split(",")} - {defaults.ef_runtime}), defaults.ef_runtime]
    embedder = Embedder(MODEL)
    embedder.embed(["warm up"])
    questions = questions_for(args.html, args.queries)
    query_vectors = np.asarray(embedder.embed(questions), dtype=np.float32)
    server = EmbeddedFalkorDB(args.data_dir / "graph")
    store = FalkorDBStore(server=server, graph="scale", ef_runtime=defaults.ef_runtime)
    results = json.loads(args.out.read_text()) if args.out.is_file() else {"sizes": []}
    results["setup"] = {"corpus": f"{args.html} copied, paragraphs marked per copy", "queries": args.queries,
                        "batch": args.batch, "ef_runtime": efs}
    try:
        copy = 0
        chunks = store.counts().nodes.get("Chunk", 0)
        for size in sizes:
            increments = []
            recorded = {increment["copy"] for row in results["sizes"] for increment in row["increments"]}
            while chunks < size:
                tree = copy_docs(args.html, args.data_dir / "copies", copy)
                marker = args.data_dir / "increments" / f"copy{copy}.json"
                if marker.is_file():  # ingested whole by an earlier run, which may have stopped before its row
                    if copy not in recorded:
                        increments.append(json.loads(marker.read_text()))
                    copy += 1
                    continue
                resumed = bool(store.query("MATCH (d:Document) WHERE d.id STARTS WITH $p RETURN count(d) AS n",
                                           {"p": f"{BASE_URL}copy{copy}/"})[0]["n"])
                if resumed:  # its rate then counts only what was left (the row says `resumed`)
                    log.info("copy %d was partly ingested by an interrupted run: ingest resumes it", copy)
                ingestor = Ingestor(store, embedder, IngestOptions(
                    sources=SourceOptions(base_url=f"{BASE_URL}copy{copy}/"), progress=False,
                    embed_batch_chunks=args.batch))
                with MemorySampler(store.server_pid()) as memory:
                    report = ingestor.ingest(tree)
                sample = sample_texts(store, copy, args.sample)
                raw = (raw_throughput(embedder, sample, args.batch) + raw_throughput(embedder, sample, args.batch)) / 2
                increments.append({"copy": copy, "chunks": report.chunks, "seconds": round(report.seconds, 1),
                                   "chunks_per_s": round(report.chunks_per_second, 1),
                                   "raw_embedding_chunks_per_s": round(raw, 1),
                                   "ratio": round(report.chunks_per_second / raw, 3),
                                   "links_resolved": report.links_resolved, "memory": memory.samples,
                                   **({"resumed": True} if resumed else {})})
                marker.parent.mkdir(parents=True, exist_ok=True)
                marker.write_text(json.dumps(increments[-1]))
                log.info("copy %d: %s", copy, {k: v for k, v in increments[-1].items() if k != "memory"})
                chunks = store.counts().nodes.get("Chunk", 0)
                copy += 1
            if args.build_only:
                if args.kg and size == sizes[-1]:
                    enrich_kg_recorded(store, embedder, args.data_dir)
                continue
            earlier = next((r for r in results["sizes"] if r["size_target"] == size), None)
            if not increments and not earlier:  # built by a run that stopped before measuring it
                markers = [json.loads(path.read_text()) for path in (args.data_dir / "increments").glob("copy*.json")]
                increments = sorted((m for m in markers if m["copy"] not in recorded), key=lambda m: m["copy"])
            if not increments and earlier:  # built by an earlier run: keep what its ingest measured
                if earlier["chunks"] != chunks:
                    log.warning("the graph (%d chunks) is past size %d: keeping its earlier row", chunks, size)
                    continue
                increments = earlier["increments"]
            elif not increments:
                log.warning("the graph (%d chunks) is past size %d and has no row for it: skipped", chunks, size)
                continue
            row = {"size_target": size, "chunks": chunks, "increments": increments,
                   "retrieval_ef_runtime": defaults.ef_runtime}
            ids, matrix = all_vectors(store)
            exact = ExactTop10(matrix, ids, query_vectors)
            row["vector"] = []
            for ef in efs:
                indexed = FalkorDBStore(server=server, graph="scale", ef_runtime=ef)
                started = time.perf_counter()
                indexed.apply_schema(MODEL, matrix.shape[1])  # rebuilds the index at a new ef
                build_s = time.perf_counter() - started
                latencies, found = timed_search(indexed, query_vectors)
                row["vector"].append({"ef_runtime": ef, "index_build_s": round(build_s, 1), **summary(latencies),
                                      **exact.report(found)})
                log.info("size %d ef %d: %s", chunks, ef, row["vector"][-1])
                indexed.close()
            store = FalkorDBStore(server=server, graph="scale", ef_runtime=defaults.ef_runtime)
            store.apply_schema(MODEL, matrix.shape[1])  # as the last ef left it: no rebuild
            row["retrieval"] = retrieval_latencies(store, embedder, questions, kg=False)
            if args.kg:
                report = enrich_kg_recorded(store, embedder, args.data_dir)
                # enrich kg resumes where an interrupted run stopped, so its rate is over the chunks it did
                if report["chunks"] or not earlier or "kg_enrich_s" not in earlier:
                    row["kg_enrich_s"] = report["seconds"]
                    row["kg_enrich_chunks"] = report["chunks"]
                else:  # re-measured on a graph enriched by an earlier run: keep what that run took
                    row["kg_enrich_s"] = earlier["kg_enrich_s"]
                    row["kg_enrich_chunks"] = earlier.get("kg_enrich_chunks")
                row["retrieval"].update(retrieval_latencies(store, embedder, questions, kg=True))
            if not args.no_bulk:
                row["falkordb_bulk_load"] = [falkordb_bulk_load(server, ids, matrix, defaults.ef_runtime, efc,
                                                                query_vectors, exact)
                                             for efc in (defaults.ef_construction, 100)]
            if not args.no_chroma:
                row["chroma"] = chroma_baseline(ids, matrix, query_vectors, exact)
            row["server_rss_mb"] = round(psutil.Process(store.server_pid()).memory_info().rss / 2**20)
            log.info("size %d: %s", chunks, {k: v for k, v in row.items() if k not in ("increments",)})
            results["sizes"] = [r for r in results["sizes"] if r["size_target"] != size] + [row]
            args.out.write_text(json.dumps(results, indent=1))
    finally:
        store.close()
        server.stop()


if __name__ == "__main__":
    main()
