"""JSON / JSONL records: the canonical corpus shape and the MultiHop-RAG article shape.

Canonical: {"id", "title", "text", optional "url", "source", "published_at", "metadata"}.
MultiHop-RAG: {"title", "author", "source", "published_at", "category", "url", "body"}.
Every field that is not the text lands on the Document node: plain values as properties, nested values in
`metadata_json`.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any

from neoweave.ingest.documents import Document, Section, Skipped, content_hash

PARSER_VERSION = "records-1"
_TEXT_FIELDS = ("text", "body", "content")
_ID_FIELDS = ("id", "_id", "doc_id")


def _record_id(record: dict[str, Any]) -> str | None:
    for key in _ID_FIELDS:
        value = record.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value).strip()
    # Articles without an id (MultiHop-RAG): their URL, else a hash of title + text, is stable.
    url = record.get("url")
    if isinstance(url, str) and url.strip():
        return url.strip()
    title, text = record.get("title"), next((record.get(k) for k in _TEXT_FIELDS if record.get(k)), None)
    if isinstance(title, str) and isinstance(text, str):
        return "rec-" + hashlib.sha1(f"{title}\n{text}".encode()).hexdigest()[:16]
    return None


def record_to_document(record: Any, *, source: str, line: int | None, settings: dict[str, Any]
                       ) -> Document | Skipped:
    """One JSON object as a Document with a single section (records have no internal structure)."""
    if not isinstance(record, dict):
        return Skipped(source, f"record is a JSON {type(record).__name__}, not an object", line)
    text_key = next((k for k in _TEXT_FIELDS if k in record), None)
    if text_key is None:
        return Skipped(source, f"record has no text field (one of {', '.join(_TEXT_FIELDS)})", line)
    text = record[text_key]
    if not isinstance(text, str) or not text.strip():
        return Skipped(source, f"record field '{text_key}' is empty or not a string", line)
    doc_id = _record_id(record)
    if doc_id is None:
        return Skipped(source, "record has no id, url or title to identify it", line)
    title = record.get("title")
    title = title.strip() if isinstance(title, str) and title.strip() else doc_id
    url = record.get("url") if isinstance(record.get("url"), str) else ""
    metadata = {k: v for k, v in record.items() if k not in (text_key, "title", "url", *_ID_FIELDS)}
    if isinstance(metadata.get("metadata"), dict):  # canonical nested metadata: flatten one level
        nested = metadata.pop("metadata")
        metadata = {**nested, **metadata}
    published = metadata.pop("published_at", None)
    canonical = json.dumps(record, sort_keys=True, ensure_ascii=False, default=str)
    body = text.strip()
    section = Section(id=f"{doc_id}#_s0", anchor="", title=title, url=url, order=0, level=0, text=body,
                      start=0, end=len(body))
    return Document(
        id=doc_id, title=title, url=url, source=f"{source}:{line}" if line is not None else source,
        format="record", content_hash=content_hash(canonical, {**settings, "parser": PARSER_VERSION}),
        sections=[section], metadata=metadata, published_at=str(published) if published is not None else None,
    )


def iter_jsonl(text_lines: Iterator[tuple[int, bytes]], *, source: str, settings: dict[str, Any],
               max_record_bytes: int) -> Iterator[Document | Skipped]:
    """Documents from JSON Lines, one per line; bad lines are reported with their line number."""
    for number, raw in text_lines:
        if not raw.strip():
            continue
        if len(raw) > max_record_bytes:
            yield Skipped(source, f"record of {len(raw)} bytes exceeds the limit of {max_record_bytes}", number)
            continue
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            yield Skipped(source, f"invalid UTF-8 at byte {exc.start} of the line", number)
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            yield Skipped(source, f"not valid JSON: {exc.msg} (column {exc.colno})", number)
            continue
        yield record_to_document(record, source=source, line=number, settings=settings)


def iter_json(text: str, *, source: str, settings: dict[str, Any]) -> Iterator[Document | Skipped]:
    """Documents from a .json file holding one object or a list of objects."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        yield Skipped(source, f"not valid JSON: {exc.msg}", exc.lineno)
        return
    records = data if isinstance(data, list) else [data]
    for index, record in enumerate(records):
        where = source if len(records) == 1 else f"{source}[{index}]"
        yield record_to_document(record, source=where, line=None, settings=settings)
