"""MuSiQue (Trivedi et al., 2022; the 2-4 hop benchmark of HippoRAG and LinearRAG) as its repository ships it:
`musique_ans_v1.0_dev.jsonl` (or `musique_full_...`), one question a line: {"id" ("2hop__...", "3hop1__...",
...), "question", "answer", "answer_aliases", "answerable", "paragraphs": [{"idx", "title", "paragraph_text",
"is_supporting"}], "question_decomposition": [...]}.

The corpus is every distinct paragraph of every question (the usual open-domain setting: each question's
distractors stay in the pool), one record each, titled by its title; MuSiQue gives different paragraphs the
same title, so a repeated title with other text is numbered ("Title (2)") and evidence names exactly the
supporting paragraphs. `type` is the hop pattern from the id; unanswerable questions (the full set) are left
out unless asked for.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.datasets.common import ConvertedSet, count_types, qa_row, read_jsonl, stable_id, write_jsonl

_HINT = "download MuSiQue's data (musique_ans_v1.0_dev.jsonl)"


def convert_musique(path: Path, out: Path, *, unanswerable: bool = False) -> ConvertedSet:
    """Write `out/corpus.jsonl` (one record a distinct paragraph) and `out/qa.jsonl` from a MuSiQue file."""
    paragraphs: dict[tuple[str, str], dict[str, Any]] = {}
    numbered: dict[str, int] = {}
    qa = []
    for number, row in enumerate(read_jsonl(path, "MuSiQue file", _HINT), 1):
        if not str(row.get("question") or "").strip() or not isinstance(row.get("paragraphs"), list):
            raise NeoweaveError(f"{path}:{number}: a row needs 'question' and 'paragraphs'", hint=_HINT)
        supporting = []
        for paragraph in row["paragraphs"]:
            title = str(paragraph.get("title") or "").strip()
            text = str(paragraph.get("paragraph_text") or "").strip()
            if not text:
                continue
            key = (title, text)
            if key not in paragraphs:
                numbered[title] = numbered.get(title, 0) + 1
                unique = title if numbered[title] == 1 else f"{title} ({numbered[title]})"
                paragraphs[key] = {"id": stable_id(title, text), "title": unique or stable_id(text), "text": text}
            if paragraph.get("is_supporting"):
                supporting.append(paragraphs[key]["title"])
        if row.get("answerable", True) is False and not unanswerable:
            continue
        qid = str(row.get("id") or f"musique{number:05d}")
        qa.append(qa_row(qid, str(row["question"]), str(row.get("answer") or ""), supporting,
                         qid.split("__", 1)[0] if "__" in qid else "all",
                         aliases=[str(a) for a in row.get("answer_aliases") or []]))
    corpus_path, qa_path = out / "corpus.jsonl", out / "qa.jsonl"
    write_jsonl(corpus_path, paragraphs.values())
    write_jsonl(qa_path, qa)
    return ConvertedSet(qa_path, corpus_path, len(qa), len(paragraphs), count_types(qa))
