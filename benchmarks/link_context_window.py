"""Re-embed every link context of a graph copy with a narrower window, cut from the stored context (issue 45: the
link contexts are nearly half the tokens embedded to build the Python docs graph). Measured and not taken: see
docs/benchmarks/indexing.md ("A narrower link context window").

    .venv/bin/python benchmarks/link_context_window.py COPY_DATA_DIR WORDS   # WORDS in all, half each side

Then build the walk index (`neoweave --data-dir COPY walk-index`) and `neoweave eval` the copy beside the
original. Writes through `set_link_context_embeddings` and checks a sample of the stored vectors afterwards.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402

LINKS = ("MATCH (s:Section)-[l:LINKS_TO]->(t:Section) WHERE l.context_embedding IS NOT NULL "
         "RETURN s.id AS source_id, t.id AS target_id, l.order AS order, l.context AS context, l.text AS text")
CHECK = ("UNWIND $rows AS row MATCH (s:Section {id: row.source_id})-[l:LINKS_TO {order: row.order}]->"
         "(t:Section {id: row.target_id}) RETURN 1 - vec.cosineDistance(l.context_embedding, vecf32(row.v)) AS same")
STORED_WORDS = 12  # the ingest default (`context_words`): what the stored contexts were cut with


def narrow(context: str | None, text: str | None, words: int) -> str:
    """The link text with `words` words around it (half before), from a stored context."""
    context, text = context or "", (text or "").strip()
    before, after = words // 2, words - words // 2
    at = context.find(text) if text else -1
    if at < 0:  # the text is not found verbatim: keep the middle of the context
        tokens = context.split()
        middle = STORED_WORDS // 2
        return " ".join(tokens[max(0, middle - before):middle + len(text.split()) + after]) if tokens else context
    left, right = context[:at].split(), context[at + len(text):].split()
    return " ".join([*(left[len(left) - before:] if before else []), text, *right[:after]]).strip()


def main() -> None:
    data_dir, words = Path(sys.argv[1]), int(sys.argv[2])
    server = EmbeddedFalkorDB(data_dir)
    store = FalkorDBStore(server=server, graph="neoweave")
    rows = store.query(LINKS)
    texts = [narrow(row["context"], row["text"], words) for row in rows]
    embedder = Embedder("all-MiniLM-L6-v2", batch_size=64)
    before = sum(embedder.count_tokens([row["context"] or "" for row in rows]))
    after = sum(embedder.count_tokens(texts))
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    print(f"{len(rows)} links; tokens {before} -> {after}; embedded in {time.perf_counter() - started:.1f} s")
    store.write_batches("set_link_context_embeddings", [
        {"source_id": row["source_id"], "target_id": row["target_id"], "order": row["order"], "embedding": vector}
        for row, vector in zip(rows, vectors, strict=True)])
    step = max(1, len(rows) // 200)
    sample = [{"source_id": rows[i]["source_id"], "target_id": rows[i]["target_id"], "order": rows[i]["order"],
               "v": list(np.asarray(vectors[i], dtype=float))} for i in range(0, len(rows), step)]
    same = store.query(CHECK, {"rows": sample})
    print(f"checked {len(same)}: {sum(1 for row in same if row['same'] > 0.9999)} hold the new vector")
    store.close()
    server.stop()


if __name__ == "__main__":
    main()
