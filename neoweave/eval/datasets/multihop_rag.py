"""MultiHop-RAG (Tang & Yang, 2024) as users download it, converted to neoweave's QA and corpus files.

Its corpus (`corpus.json`: a list of news articles {title, author, source, published_at, category, url, body})
is ingested as records (the ingest reads that shape; the URL is the id). Its questions (`MultiHopRAG.json`:
{query, answer, question_type, evidence_list: [{title, url, fact, ...}]}) become `qa.jsonl` rows whose
evidence is the titles of the articles the facts come from and whose `evidence_text` is the facts (the
ground-truth context of the thesis's retrieval BERTScore); `type` is the question type (inference_query,
comparison_query, temporal_query, null_query). A null query's gold answer is "Insufficient information":
`accuracy` counts it right only when the model says so.

The thesis's sample (001 l. 612-640): `per_type` questions drawn at random from each question type
(`random.Random(seed).sample`, its Python `random.sample`; 50 per type gave its 200 questions), and the corpus
cut to the articles those questions cite (its 157 documents). Which 200 it drew is not published: a seed gives a
sample of the same design, not the same questions.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.eval.datasets.common import ConvertedSet, count_types, qa_row, read_json_list, write_jsonl

_HINT = "download MultiHop-RAG's dataset/ folder (corpus.json, MultiHopRAG.json)"


def _evidence(row: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in row.get("evidence_list") or [] if isinstance(e, dict)]


def stratified_sample(rows: list[dict[str, Any]], per_type: int, seed: int) -> list[dict[str, Any]]:
    """`per_type` rows of each question type (all of a smaller type), drawn with `random.Random(seed)`; the
    sample keeps the file's order."""
    if per_type < 1:
        raise NeoweaveError(f"--per-type must be at least 1, not {per_type}")
    by_type: dict[str, list[int]] = {}
    for index, row in enumerate(rows):
        by_type.setdefault(str(row.get("question_type") or "all"), []).append(index)
    rng = random.Random(seed)
    chosen = {index for qtype in sorted(by_type) for index in
              rng.sample(by_type[qtype], min(per_type, len(by_type[qtype])))}
    return [row for index, row in enumerate(rows) if index in chosen]


def convert_multihop_rag(corpus: Path, questions: Path, out: Path, *, per_type: int | None = None,
                         seed: int = 0) -> ConvertedSet:
    """Write `out/corpus.jsonl` and `out/qa.jsonl` from MultiHop-RAG's two files (with `per_type`, the thesis's
    stratified sample and only the articles it cites)."""
    articles = read_json_list(corpus, "corpus", _HINT)
    rows = read_json_list(questions, "questions", _HINT)
    for number, row in enumerate(rows, 1):
        if not isinstance(row, dict) or not str(row.get("query") or "").strip() or "answer" not in row:
            raise NeoweaveError(f"{questions}: question {number} needs 'query' and 'answer'")
    for number, article in enumerate(articles, 1):
        if not isinstance(article, dict) or not str(article.get("body") or "").strip():
            raise NeoweaveError(f"{corpus}: article {number} has no body")
    numbered = [{**row, "_number": number} for number, row in enumerate(rows, 1)]
    if per_type is not None:
        numbered = stratified_sample(numbered, per_type, seed)
        cited_urls = {str(e.get("url")) for row in numbered for e in _evidence(row) if e.get("url")}
        cited_titles = {str(e.get("title")) for row in numbered for e in _evidence(row) if e.get("title")}
        articles = [a for a in articles if str(a.get("url")) in cited_urls or str(a.get("title")) in cited_titles]
    qa = [qa_row(f"mh{row['_number']:04d}", str(row["query"]), str(row["answer"]),
                 [str(e["title"]) for e in _evidence(row) if e.get("title")],
                 str(row.get("question_type") or "all"),
                 evidence_text=[str(e["fact"]) for e in _evidence(row) if e.get("fact")]) for row in numbered]
    out.mkdir(parents=True, exist_ok=True)
    corpus_path, qa_path = out / "corpus.jsonl", out / "qa.jsonl"
    documents = write_jsonl(corpus_path, articles)
    write_jsonl(qa_path, qa)
    return ConvertedSet(qa_path, corpus_path, len(qa), documents, count_types(qa))
