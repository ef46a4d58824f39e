"""UltraDomain (the LightRAG and PankRAG benchmark; its agriculture, cs, legal and cooking files are also the
corpora of KHL-RAG's domain sets, 003 l. 149) as published: one `<domain>.jsonl` per domain, each line a question
over one book: {"_id", "input" (the question), "answers": [...], "context" (the book's text), "context_id",
"label" (the domain), "length", "meta": {"title", "authors", ...}}.

Every distinct book becomes one record of the corpus (id = its context_id, title = its meta title, the domain and
authors as metadata); a question's evidence is its book's title (made unique with the context id when two books
share a title); `type` is the domain. KHL-RAG's Easy, Medium and Hard question variants were generated with its
QA-construction prompt and are not published: the converter reads the domain files' own questions (its
"Original" variant).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.datasets.common import ConvertedSet, count_types, qa_row, read_jsonl, stable_id, write_jsonl

_HINT = "download UltraDomain's <domain>.jsonl files (agriculture.jsonl, cs.jsonl, legal.jsonl, ...)"


def convert_ultradomain(files: list[Path], out: Path) -> ConvertedSet:
    """Write `out/corpus.jsonl` (one record a book) and `out/qa.jsonl` from UltraDomain domain files."""
    if not files:
        raise NeoweaveError("no UltraDomain file given", hint=_HINT)
    books: dict[str, dict[str, Any]] = {}
    titles: dict[str, str] = {}  # title -> the context id that holds it
    qa = []
    for path in files:
        for number, row in enumerate(read_jsonl(path, "UltraDomain file", _HINT), 1):
            question, context = str(row.get("input") or "").strip(), str(row.get("context") or "")
            if not question or not context.strip():
                raise NeoweaveError(f"{path}:{number}: a row needs 'input' (the question) and 'context'", hint=_HINT)
            domain = str(row.get("label") or path.stem)
            context_id = str(row.get("context_id") or stable_id(context))
            if context_id not in books:
                meta = row.get("meta") if isinstance(row.get("meta"), dict) else {}
                title = str(meta.get("title") or "").strip() or f"{domain} book {context_id[:8]}"
                if titles.setdefault(title, context_id) != context_id:
                    title = f"{title} ({context_id[:8]})"
                books[context_id] = {"id": context_id, "title": title, "text": context,
                                     "metadata": {"domain": domain, **{k: v for k, v in meta.items()
                                                                       if k in ("authors", "language")}}}
            answers = [str(a) for a in row.get("answers") or [] if str(a).strip()]
            qa.append(qa_row(str(row.get("_id") or f"{domain}-{number:04d}"), question, answers[0] if answers else "",
                             [books[context_id]["title"]], domain, aliases=answers[1:]))
    corpus_path, qa_path = out / "corpus.jsonl", out / "qa.jsonl"
    write_jsonl(corpus_path, books.values())
    write_jsonl(qa_path, qa)
    return ConvertedSet(qa_path, corpus_path, len(qa), len(books), count_types(qa))
