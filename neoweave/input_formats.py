"""The file formats ingest reads, by name and by file extension.

Kept apart from `neoweave.ingest` (whose import loads the parsers and the text splitter) so the command line
lists them in its help without that cost.
"""

from __future__ import annotations

from typing import Literal

Format = Literal["auto", "html", "jsonl", "json", "text", "markdown", "pdf", "docx"]
FORMATS: tuple[str, ...] = ("auto", "html", "jsonl", "json", "text", "markdown", "pdf", "docx")
EXTENSIONS: dict[str, str] = {
    ".html": "html", ".htm": "html", ".xhtml": "html",
    ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
    ".md": "markdown", ".markdown": "markdown",
    ".txt": "text", ".text": "text", ".rst": "text",
    ".pdf": "pdf", ".docx": "docx",
}
BINARY_FORMATS = frozenset({"pdf", "docx"})
"""Formats whose files are binary by design (the NUL-byte check that skips binaries does not apply)."""
