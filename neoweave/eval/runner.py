"""Run strategies over a QA set and aggregate retrieval (and optionally answer) metrics side by side.

QA format (canonical, see the data README): {"id", "question", "answer", "aliases", "evidence", "type"}.
Evidence names document titles (record corpora) or section URLs (documentation); a retrieved chunk counts
when its document title, or its section URL, is in the evidence.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tqdm import tqdm

from neoweave.embeddings import Embedder
from neoweave.errors import NeoweaveError
from neoweave.eval import metrics
from neoweave.query import strategy as make_strategy
from neoweave.store.base import GraphStore


@dataclass
class Question:
    id: str
    question: str
    answer: str
    aliases: list[str]
    evidence: list[str]
    type: str = "all"


def load_qa(path: str | Path) -> list[Question]:
    questions = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            questions.append(Question(str(row["id"]), row["question"], row.get("answer", ""),
                                      list(row.get("aliases") or []), list(row["evidence"]),
                                      row.get("type") or "all"))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise NeoweaveError(f"{path}:{number}: not a QA record ({exc})",
                                hint='expected {"id", "question", "answer", "evidence": [...]}') from exc
    if not questions:
        raise NeoweaveError(f"{path}: no questions")
    return questions


@dataclass
class RunConfig:
    strategies: list[str]
    ks: list[int]
    answer: bool = False
    prompt: str = "short_answer"
    parameters: dict[str, dict[str, Any]] = field(default_factory=dict)  # per-strategy overrides


def _evidence_keys(store: GraphStore, items: list[Any], by_url: bool, titles: dict[str, str]) -> list[str]:
    if by_url:
        return [item.url for item in items]
    missing = sorted({item.doc_id for item in items} - set(titles))
    if missing:
        titles.update({r["id"]: r["title"] for r in store.run("document_titles", {"ids": missing})})
    return [titles.get(item.doc_id, item.doc_id) for item in items]


def run(store: GraphStore, embedder: Embedder, questions: list[Question], config: RunConfig, *, llm=None,
        progress: bool = True) -> list[dict[str, Any]]:
    """One record per (strategy, k, question): retrieved ids and scores, metrics, cost, answer."""
    by_url = any("://" in e or "#" in e for q in questions for e in q.evidence)
    titles: dict[str, str] = {}
    records = []
    total = len(config.strategies) * len(config.ks) * len(questions)
    bar = tqdm(total=total, desc="evaluating", unit="q", disable=not progress)
    for name in config.strategies:
        for k in config.ks:
            strategy = make_strategy(name, store, embedder, k=k, **config.parameters.get(name, {}))
            for question in questions:
                record: dict[str, Any] = {"strategy": name, "k": k, "question_id": question.id,
                                          "type": question.type, "question": question.question}
                if config.answer:
                    from neoweave.query.answer import answer

                    answered = answer(question.question, strategy=strategy, llm=llm, prompt=config.prompt)
                    result = answered.retrieval
                    golds = [question.answer, *question.aliases]
                    record.update(answer=answered.answer, exact_match=metrics.exact_match(answered.answer, golds),
                                  f1=metrics.token_f1(answered.answer, golds),
                                  insufficient=metrics.is_insufficient(answered.answer))
                else:
                    result = strategy.retrieve(question.question)
                keys = _evidence_keys(store, result.items, by_url, titles)
                record.update(
                    retrieved=[{"chunk_id": i.chunk_id, "evidence": key, "score": i.score, "origin": i.origin}
                               for i, key in zip(result.items, keys, strict=True)],
                    hit=metrics.hit(keys, question.evidence), perfect=metrics.perfect(keys, question.evidence),
                    recall=metrics.evidence_recall(keys, question.evidence),
                    mrr=metrics.reciprocal_rank(keys, question.evidence),
                    chunks=len(result.items), context_tokens=result.context_tokens,
                    ms=dict(result.cost.milliseconds), total_ms=result.cost.total_ms,
                    llm_calls=result.cost.llm_calls,
                    llm_tokens=result.cost.prompt_tokens + result.cost.completion_tokens)
                records.append(record)
                bar.update(1)
    bar.close()
    return records


_MEAN_FIELDS = ("hit", "perfect", "recall", "mrr", "chunks", "context_tokens", "llm_calls", "llm_tokens",
                "exact_match", "f1", "insufficient")


def summarize(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Means per (strategy, k, question type) and over all types, with latency p50/p95."""
    groups: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for record in records:
        for qtype in ("all", record["type"]) if record["type"] != "all" else ("all",):
            groups.setdefault((record["strategy"], record["k"], qtype), []).append(record)
    rows = []
    for (name, k, qtype), group in sorted(groups.items()):
        row: dict[str, Any] = {"strategy": name, "k": k, "type": qtype, "questions": len(group)}
        for key in _MEAN_FIELDS:
            values = [r[key] for r in group if key in r]
            if values:
                row[key] = statistics.fmean(values)
        latencies = [r["total_ms"] for r in group]
        row["p50_ms"], row["p95_ms"] = metrics.percentile(latencies, 50), metrics.percentile(latencies, 95)
        rows.append(row)
    return rows


def markdown_table(rows: list[dict[str, Any]]) -> str:
    columns = [c for c in ("strategy", "k", "type", "questions", "hit", "perfect", "recall", "mrr", "exact_match",
                           "f1", "insufficient", "chunks", "context_tokens", "llm_tokens", "p50_ms", "p95_ms")
               if any(c in row for row in rows)]
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        cells = []
        for column in columns:
            value = row.get(column, "")
            cells.append(f"{value:.3f}" if isinstance(value, float) and column not in ("p50_ms", "p95_ms",
                         "context_tokens", "chunks", "llm_tokens") else
                         f"{value:.0f}" if isinstance(value, float) else str(value))
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_report(out: Path, records: list[dict[str, Any]], rows: list[dict[str, Any]], title: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    (out / "records.json").write_text(json.dumps(records, indent=1, default=str))
    (out / "summary.json").write_text(json.dumps(rows, indent=1))
    report = out / "report.md"
    report.write_text(f"# {title}\n\n{markdown_table(rows)}\n\nPer-question records: records.json\n")
    return report
