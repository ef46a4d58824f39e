"""A deduplicated documentation corpus of ~100k chunks, for vector recall without the copies' near-twins.

    .venv/bin/python benchmarks/dedup_corpus.py --out /work/bench/dedup --target 100000

The scale corpus repeats the Python docs in copies, so more than half of its questions have a near-tie at the
10th place and strict recall@10 is capped near 0.988 whatever the index does. This corpus is built instead from
several documentation packages Debian ships (install them first, as root):

    apt-get install -y --no-install-recommends python3.11-doc linux-doc postgresql-doc-15 git-doc rust-doc \
        python-django-doc python-sqlalchemy-doc sphinx-doc python-scipy-doc

and `nodejs-doc` where Debian's own nodejs is installed: on a machine with NodeSource's nodejs, apt removes nodejs
to install it (the measured run had it: 3,646 chunks; without it the corpus still reaches 100k from the others).
A missing package is skipped with a warning.

Each package's HTML is parsed and chunked exactly as `neoweave ingest` does (the HTML chunking defaults), the
packages one after another in the order below (so a size prefix is a corpus grown by whole packages). A chunk
is kept when its whitespace-normalised text is new; after embedding (the default MiniLM on the ONNX runtime, the
vectors ingest would store), a chunk whose vector is within `--twin` cosine distance of a kept one is dropped too
(a page repeated under another name, boilerplate that differs in a word). Every `--holdout`-th kept chunk is set
aside as a query (a text the index does not hold, as ann-benchmarks queries are).

Writes to `--out`: `chunks.jsonl` (id, package, source, text), `vectors.npy` (float32, unit length, in the
order of chunks.jsonl), `queries.jsonl` and `query_vectors.npy` (the held-out chunks), `manifest.json` (counts
per package and step). Embedding resumes from `embed-*.npy` shards left by an interrupted run (each with the
hash of the texts it holds: a shard of other texts is embedded again).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.ingest.chunking import DEFAULT_CHUNKING, Chunker  # noqa: E402
from neoweave.ingest.documents import Document  # noqa: E402
from neoweave.ingest.sources import SourceOptions, iter_documents  # noqa: E402

log = logging.getLogger("dedup_corpus")
MODEL = "all-MiniLM-L6-v2"
# (package, HTML root): prose documentation; rust's API reference (std, core, alloc) is left out, its pages
# are generated from one template per item and would be most of the corpus.
PACKAGES = [
    ("python3.11-doc", "/usr/share/doc/python3.11/html"),
    ("linux-doc", "/usr/share/doc/linux-doc-6.1/html"),
    ("postgresql-doc-15", "/usr/share/doc/postgresql-doc-15/html"),
    ("git-doc", "/usr/share/doc/git-doc"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/book"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/reference"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/rust-by-example"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/rustc"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/nomicon"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/cargo"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/edition-guide"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/embedded-book"),
    ("rust-doc", "/usr/share/doc/rust-doc/html/unstable-book"),
    ("python-django-doc", "/usr/share/doc/python-django-doc/html"),
    ("python-sqlalchemy-doc", "/usr/share/doc/python-sqlalchemy-doc/html"),
    ("nodejs-doc", "/usr/share/doc/nodejs/api"),
    ("sphinx-doc", "/usr/share/doc/sphinx-doc/html"),
    ("python-scipy-doc", "/usr/share/doc/python-scipy-doc/html"),
]
MIN_CHARS = 200  # shorter chunks are headings and navigation crumbs, not passages a question finds


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def chunk_texts(root: Path) -> list[tuple[str, str]]:
    """(source, text) of every chunk of the HTML under `root`, chunked as ingest chunks HTML."""
    chunker = Chunker(DEFAULT_CHUNKING["html"])
    out = []
    options = SourceOptions(format="html", skip_paths=(*SourceOptions().skip_paths, "all.html"))  # node: every page
    for item in iter_documents(root, options, {"html": {}}):
        if not isinstance(item, Document):
            continue
        for section in chunker.chunk(item).sections:
            out += [(item.source, chunk.text) for chunk in section.chunks]
    return out


def collect(target: int, holdout: int) -> tuple[list[dict], dict]:
    """Exact-deduplicated chunks, package by package, until `target` (+ held-out share and a margin for twins)."""
    wanted = int(target * (1 + 1 / holdout) * 1.08)
    seen: set[str] = set()
    rows: list[dict] = []
    counts: dict[str, dict] = {}
    for package, folder in PACKAGES:
        root = Path(folder)
        if not root.is_dir():
            log.warning("%s: %s missing (apt-get install %s)", package, folder, package)
            continue
        started = time.perf_counter()
        pieces = chunk_texts(root)
        entry = counts.setdefault(package, {"chunks": 0, "kept": 0, "short": 0, "repeated": 0})
        entry["chunks"] += len(pieces)
        for source, text in pieces:
            if len(rows) >= wanted:
                break
            key = hashlib.sha1(normalised(text).encode()).hexdigest()
            if len(text) < MIN_CHARS:
                entry["short"] += 1
            elif key in seen:
                entry["repeated"] += 1
            else:
                seen.add(key)
                entry["kept"] += 1
                rows.append({"package": package, "source": source, "text": text})
        log.info("%s %s: %d chunks, %d kept (%d in all), %.0f s", package, folder, len(pieces), entry["kept"],
                 len(rows), time.perf_counter() - started)
        if len(rows) >= wanted:
            break
    return rows, counts


def embed_resumable(texts: list[str], out: Path, shard: int = 5000) -> np.ndarray:
    """Vectors of `texts` in shards of `shard` (files `embed-<n>.npy`: an interrupted run resumes)."""
    embedder = Embedder(MODEL, batch_size=64)
    parts = []
    started = time.perf_counter()
    for number, begin in enumerate(range(0, len(texts), shard)):
        path, key_path = out / f"embed-{number:03d}.npy", out / f"embed-{number:03d}.sha1"
        key = hashlib.sha1("\0".join(texts[begin:begin + shard]).encode()).hexdigest()
        if path.is_file() and key_path.is_file() and key_path.read_text() == key:  # the same texts: reuse
            parts.append(np.load(path))
            continue
        vectors = np.asarray(embedder.embed(texts[begin:begin + shard]), dtype=np.float32)
        np.save(path, vectors)
        key_path.write_text(key)
        parts.append(vectors)
        done = begin + len(vectors)
        elapsed = time.perf_counter() - started
        log.info("embedded %d / %d (%.1f chunks/s this run)", done, len(texts), len(vectors) * (number + 1) / elapsed
                 if elapsed else 0.0)
    return np.concatenate(parts)


def twins(matrix: np.ndarray, distance: float, block: int = 4096) -> np.ndarray:
    """Mask of the rows to keep: a row whose cosine to an earlier kept row is above 1 - `distance` goes."""
    keep = np.ones(len(matrix), dtype=bool)
    for begin in range(0, len(matrix), block):
        rows = matrix[begin:begin + block]
        earlier = rows @ matrix[:begin][keep[:begin]].T if begin else np.zeros((len(rows), 0), np.float32)
        inside = rows @ rows.T
        for i in range(len(rows)):
            if earlier.shape[1] and earlier[i].max() > 1 - distance:
                keep[begin + i] = False
                continue
            before = inside[i, :i][keep[begin:begin + i]]
            if before.size and before.max() > 1 - distance:
                keep[begin + i] = False
    return keep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--target", type=int, default=100_000, help="chunks in the corpus (queries aside)")
    parser.add_argument("--holdout", type=int, default=200, help="every n-th kept chunk becomes a query")
    parser.add_argument("--twin", type=float, default=2e-3, help="cosine distance under which a chunk is a twin")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    listing = args.out / "collected.jsonl"
    if listing.is_file():
        rows = [json.loads(line) for line in listing.read_text().splitlines()]
        counts = json.loads((args.out / "collected-counts.json").read_text())
    else:
        rows, counts = collect(args.target, args.holdout)
        listing.write_text("".join(json.dumps(row) + "\n" for row in rows))
        (args.out / "collected-counts.json").write_text(json.dumps(counts, indent=1))
    started = time.perf_counter()
    matrix = embed_resumable([row["text"] for row in rows], args.out)
    embed_seconds = time.perf_counter() - started
    keep = twins(matrix, args.twin)
    kept = [i for i in np.flatnonzero(keep)]
    queries = kept[args.holdout - 1::args.holdout]
    query_set = set(queries)
    corpus = [i for i in kept if i not in query_set][:args.target]
    with (args.out / "chunks.jsonl").open("w") as handle:
        for number, i in enumerate(corpus):
            handle.write(json.dumps({"id": f"d{number:06d}", **rows[i]}) + "\n")
    np.save(args.out / "vectors.npy", matrix[corpus])
    with (args.out / "queries.jsonl").open("w") as handle:
        for i in queries:
            handle.write(json.dumps(rows[i]) + "\n")
    np.save(args.out / "query_vectors.npy", matrix[queries])
    per_package: dict[str, int] = {}
    for i in corpus:
        per_package[rows[i]["package"]] = per_package.get(rows[i]["package"], 0) + 1
    manifest = {"model": MODEL, "collected": len(rows), "twins_dropped": int((~keep).sum()), "queries": len(queries),
                "corpus": len(corpus), "corpus_per_package": per_package, "steps": counts,
                "twin_distance": args.twin, "min_chars": MIN_CHARS, "embed_seconds": round(embed_seconds, 1)}
    (args.out / "manifest.json").write_text(json.dumps(manifest, indent=1))
    log.info("corpus %d chunks, %d queries, %d twins dropped", len(corpus), len(queries), manifest["twins_dropped"])


if __name__ == "__main__":
    main()
