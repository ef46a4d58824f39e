"""MultiHop-RAG (Tang & Yang, 2024) as users download it, converted to neoweave's QA and corpus files.

Its corpus (`corpus.json`: a list of news articles {title, author, source, published_at, category, url, body})
is ingested as records (the ingest reads that shape; the URL is the id). Its questions (`MultiHopRAG.json`:
{query, answer, question_type, evidence_list: [{title, url, fact, ...}]}) become `qa.jsonl` rows whose
evidence is the titles of the articles the facts come from and whose `evidence_text` is the facts (the
ground-truth context of the thesis's retrieval BERTScore); `type` is the question type (inference_query,
comparison_query, temporal_query, null_query). A null query's gold answer is "Insufficient information":
`accuracy` counts it right only when the model says so.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError


@dataclass
class MultiHopSet:
    qa_path: Path
    corpus_path: Path
    questions: int
    documents: int
    by_type: dict[str, int]


def _read_list(path: Path, what: str) -> list[Any]:
    if not path.is_file():
        raise NeoweaveError(f"{what} not found: {path}", hint="download MultiHop-RAG's dataset/ folder "
                            "(corpus.json, MultiHopRAG.json)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NeoweaveError(f"{path}: not readable JSON ({exc})") from exc
    if not isinstance(data, list):
        raise NeoweaveError(f"{path}: expected a JSON list of {what} entries, got {type(data).__name__}")
    return data


def convert_multihop_rag(corpus: Path, questions: Path, out: Path) -> MultiHopSet:
    """Write `out/corpus.jsonl` and `out/qa.jsonl` from MultiHop-RAG's two files."""
    articles = _read_list(corpus, "corpus")
    rows = _read_list(questions, "questions")
    out.mkdir(parents=True, exist_ok=True)
    corpus_path, qa_path = out / "corpus.jsonl", out / "qa.jsonl"
    documents = 0
    with corpus_path.open("w", encoding="utf-8") as handle:
        for number, article in enumerate(articles, 1):
            if not isinstance(article, dict) or not str(article.get("body") or "").strip():
                raise NeoweaveError(f"{corpus}: article {number} has no body")
            handle.write(json.dumps(article, ensure_ascii=False) + "\n")
            documents += 1
    by_type: dict[str, int] = {}
    with qa_path.open("w", encoding="utf-8") as handle:
        for number, row in enumerate(rows, 1):
            if not isinstance(row, dict) or not str(row.get("query") or "").strip() or "answer" not in row:
                raise NeoweaveError(f"{questions}: question {number} needs 'query' and 'answer'")
            evidence = list(dict.fromkeys(str(e["title"]) for e in row.get("evidence_list") or []
                                          if isinstance(e, dict) and e.get("title")))
            facts = [str(e["fact"]) for e in row.get("evidence_list") or [] if isinstance(e, dict) and e.get("fact")]
            qtype = str(row.get("question_type") or "all")
            by_type[qtype] = by_type.get(qtype, 0) + 1
            handle.write(json.dumps({"id": f"mh{number:04d}", "question": row["query"], "answer": str(row["answer"]),
                                     "aliases": [], "evidence": evidence, "type": qtype, "evidence_text": facts},
                                    ensure_ascii=False) + "\n")
    return MultiHopSet(qa_path, corpus_path, len(rows), documents, by_type)
