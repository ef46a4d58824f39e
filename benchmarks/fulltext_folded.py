"""Full-text over folded text (`search_text`), before/after: how many chunks carry it, and which text the chunk
full-text index answers from; with --remove, first remove every chunk's `search_text` (run it on a COPY of a
graph: the "before" side, the index over `text` alone).

    .venv/bin/python benchmarks/fulltext_folded.py COPY_DIR --remove --out before.json

Probe: for the first N chunks (id order) holding two words joined by whitespace the tokenizer does not split at
("alpha\\nbeta"), one of those words whose first five letters begin no word standing alone in the chunk (so
neither it nor a stem of it is indexed from `text`); the chunk full-text index, every match, is asked for it.
With `search_text` indexed it finds the chunk; over `text` alone it should not.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import neoweave  # noqa: E402
from neoweave.store.values import search_text  # noqa: E402

UNSPLIT = re.compile(r"[^\S \t]")


GLUED = re.compile(r"(\w+)[^\S \t]+(\w+)")


def probe_word(text: str) -> str | None:
    """A word joined to the next (or previous) word by unsplit whitespace alone ("alpha\\nbeta") whose first five
    letters begin no word that stands alone in `text` (between spaces, tabs or punctuation), so neither the word
    nor a stem of it is indexed from `text`."""
    words = [part for token in re.split(r"[ \t]+", text) for part in re.split(r"[^\w\s]+", token)]
    alone = {w.lower()[:5] for w in words if w and not UNSPLIT.search(w)}
    for match in GLUED.finditer(text):
        for word in match.groups():
            if re.fullmatch(r"[A-Za-z]{6,}", word) and word.lower()[:5] not in alone:
                return word
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data_dir", type=Path)
    parser.add_argument("--remove", action="store_true", help="remove every chunk's search_text first")
    parser.add_argument("--probes", type=int, default=30, help="chunks probed")
    parser.add_argument("--out", type=Path, required=True, help="JSON result")
    args = parser.parse_args()
    with neoweave.open(args.data_dir) as kb:
        store = kb.store
        count = "MATCH (c:Chunk) WHERE c.search_text IS NOT NULL RETURN count(c) AS n"
        chunks = store.query("MATCH (c:Chunk) RETURN count(c) AS n")[0]["n"]
        carrying = store.query(count)[0]["n"]
        texts = [row for rows in store.pages("chunk_texts_page", size=2000, cursor="id") for row in rows]
        foldable = [row for row in texts if search_text(row["text"] or "")]
        removed = 0
        if args.remove:
            removed = store.write_batches("set_chunk_search_texts",
                                          [{"id": row["id"], "search_text": None} for row in foldable])
        after = store.query(count)[0]["n"]
        probes = []
        for row in foldable:
            word = probe_word(row["text"])
            if word is None:
                continue
            hits = {hit.id for hit in store.fulltext_search("chunk_text", word, 100000)}
            probes.append({"chunk": row["id"], "word": word, "found": row["id"] in hits, "matches": len(hits)})
            if len(probes) == args.probes:
                break
    whitespace: dict[str, int] = {}
    for row in foldable:
        for char in set(UNSPLIT.findall(row["text"])):
            whitespace[repr(char)] = whitespace.get(repr(char), 0) + 1
    glued = sum(1 for row in foldable if GLUED.search(row["text"]))
    result = {"data_dir": str(args.data_dir), "chunks": chunks, "chunks_with_unsplit_whitespace": len(foldable),
              "chunks_with_words_joined_by_it": glued,
              "chunks_with_search_text": carrying, "removed": removed, "chunks_with_search_text_now": after,
              "chunks_by_whitespace_char": whitespace,
              "probes": len(probes), "probes_found": sum(p["found"] for p in probes), "probe_rows": probes}
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps({k: v for k, v in result.items() if k != "probe_rows"}, indent=1))
    print(json.dumps(probes[:3]))


if __name__ == "__main__":
    main()
