"""What every dataset converter shares: reading the downloaded files with errors that name them, writing the
QA and corpus files, and the summary a converter returns."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError


@dataclass
class ConvertedSet:
    """A converted benchmark: where its files are and how to evaluate on it."""

    qa_path: Path
    corpus_path: Path
    questions: int
    documents: int
    by_type: dict[str, int] = field(default_factory=dict)
    eval_options: str = ""
    """Options `neoweave eval` needs besides --corpus and --qa (a base URL, say)."""

    def summary(self) -> str:
        types = ", ".join(f"{name} {count}" for name, count in sorted(self.by_type.items()))
        return (f"{self.questions} questions ({types}) -> {self.qa_path}; {self.documents} documents -> "
                f"{self.corpus_path}\n  neoweave eval --corpus {self.corpus_path} --qa {self.qa_path}"
                f"{' ' + self.eval_options if self.eval_options else ''} --strategies naive,ppr --k 5")


def read_json(path: Path, what: str, hint: str) -> Any:
    """A downloaded JSON file; a missing or unreadable one is an error naming it."""
    if not path.is_file():
        raise NeoweaveError(f"{what} not found: {path}", hint=hint)
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NeoweaveError(f"{path}: not readable JSON ({exc})", hint=hint) from exc


def read_json_list(path: Path, what: str, hint: str) -> list[Any]:
    data = read_json(path, what, hint)
    if not isinstance(data, list):
        raise NeoweaveError(f"{path}: expected a JSON list of {what} entries, got {type(data).__name__}", hint=hint)
    return data


def read_jsonl(path: Path, what: str, hint: str) -> list[dict[str, Any]]:
    """A downloaded JSON Lines file, each line an object; a bad line is an error naming file and line."""
    return [row for _, row in numbered_jsonl(path, what, hint)]


def numbered_jsonl(path: Path, what: str, hint: str) -> list[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSON Lines file, so a caller checking the records can
    name the line too; a missing file, an unreadable one or a line that is not a JSON object is an error."""
    if not path.is_file():
        raise NeoweaveError(f"{what} not found: {path}", hint=hint)
    rows = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise NeoweaveError(f"{path}: not readable ({exc})", hint=hint) from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise NeoweaveError(f"{path}:{number}: not JSON ({exc})", hint=hint) from exc
        if not isinstance(row, dict):
            raise NeoweaveError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}", hint=hint)
        rows.append((number, row))
    return rows


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    path.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            count += 1
    return count


def qa_row(qid: str, question: str, answer: str, evidence: list[str], qtype: str, *, aliases: list[str] | None = None,
           evidence_text: list[str] | None = None) -> dict[str, Any]:
    row: dict[str, Any] = {"id": qid, "question": question, "answer": answer, "aliases": aliases or [],
                           "evidence": list(dict.fromkeys(evidence)), "type": qtype}
    if evidence_text:
        row["evidence_text"] = evidence_text
    return row


def stable_id(*parts: str) -> str:
    """A short id that stays the same for the same content."""
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def count_types(rows: Iterable[dict[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["type"]] = counts.get(row["type"], 0) + 1
    return counts
