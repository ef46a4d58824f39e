"""Walk a file or folder and turn each input into parsed documents, streaming, one file at a time.

Files of unknown type in a folder (images, CSS, JavaScript) are ignored; inputs of a known type that cannot
be read (binary, empty, in no encoding found, too large, malformed) are reported as `Skipped` with the file, the
line where it applies, and the reason. Text, Markdown and HTML are read in the encoding they were written in
(`encodings`), which their Document records (`encoding`); JSON and JSON Lines are UTF-8 by their standards.
"""

from __future__ import annotations

import codecs
import errno
import fnmatch
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from neoweave.errors import NeoweaveError
from neoweave.ingest import encodings, html, records, text
from neoweave.ingest.documents import Document, Skipped, Unchanged, content_hash
from neoweave.input_formats import BINARY_FORMATS, FORMATS, Format
from neoweave.input_formats import EXTENSIONS as _EXTENSIONS

StoredHash = Callable[[str], str | None]
"""A document id -> the content hash the graph holds for it (None: not stored)."""

__all__ = ["FORMATS", "Format", "SourceOptions", "SourceStats", "StoredHash", "iter_documents"]


@dataclass(frozen=True)
class SourceOptions:
    format: Format = "auto"
    base_url: str | None = None
    """URL the ingested folder is published at (default: its file:// URL). Page URLs, document ids of
    pages, and which links count as internal all derive from it."""
    skip_paths: tuple[str, ...] = ("genindex*.html", "*/genindex*.html", "search.html", "*/search.html",
                                   "*modindex.html", "contents.html", "_*/*", "*/_*/*", ".*/*", "*/.*/*")
    """Glob patterns (paths relative to the ingested folder) that are never read: navigation pages
    (Sphinx's index, search and master table of contents) and build or hidden folders (_static, _sources,
    .git)."""
    max_file_bytes: int = 20 * 1024 * 1024
    max_record_bytes: int = 5 * 1024 * 1024
    html: html.HtmlOptions = field(default_factory=html.HtmlOptions)


@dataclass
class SourceStats:
    files_seen: int = 0
    files_ignored: int = 0
    bytes_total: int | None = None
    """Size of the files to read (known before the first is parsed): the total of ingest's progress."""
    bytes_read: int = 0
    """Of them, read so far (a JSONL file counts line by line, so one large file shows its progress too)."""


def unreadable_path(path: Path, shown: str | None = None) -> str | None:
    """Why `path` cannot be read as an input, in words that follow "ingest path" (naming it as `shown`, by default
    as given): None when it can. A symlink loop, or a symlink whose target is gone, is told apart from a path
    that was never there."""
    name = shown or str(path)
    try:
        path.stat()
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return f"is a symlink loop: {name} (its links lead back to themselves, never to a file or folder)"
        if path.is_symlink():
            return f"is a symlink to {os.readlink(path)}, which does not exist: {name}"
        if exc.errno == errno.ENOENT:
            return f"not found: {name}"
        return f"cannot be read: {name}: {exc.strerror}"


def _file_format(path: Path, requested: Format) -> str | None:
    if requested != "auto":
        return requested
    return _EXTENSIONS.get(path.suffix.lower())


def _root_url(root: Path, base_url: str | None) -> str:
    if base_url:
        return base_url if base_url.endswith("/") else base_url + "/"
    return root.as_uri() + "/"


def _iter_files(root: Path) -> Iterator[Path]:
    if root.is_file():
        yield root
        return
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            yield Path(folder) / name


def _read_checked(path: Path, source: str, max_bytes: int, binary: bool = False) -> bytes | Skipped:
    try:
        size = path.stat().st_size
    except OSError as exc:
        return _unreadable(path, source, exc)
    if size == 0:
        return Skipped(source, "empty file (0 bytes)")
    if size > max_bytes:
        return Skipped(source, f"file of {size} bytes exceeds the size limit of {max_bytes} bytes")
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return Skipped(source, f"cannot read: {exc.strerror}")
    if not binary and b"\x00" in raw[:8192] and encodings.byte_order_mark(raw) is None:  # UTF-16/32 hold NULs
        return Skipped(source, "binary file (contains NUL bytes)")
    return raw


def _unreadable(path: Path, source: str, exc: OSError) -> Skipped:
    """A file of the folder that cannot be opened: a symlink loop or dangling symlink said so, else the error."""
    if exc.errno == errno.ELOOP:
        return Skipped(source, "a symlink loop (its links lead back to themselves, never to a file)")
    if path.is_symlink() and exc.errno == errno.ENOENT:
        return Skipped(source, f"a symlink to {os.readlink(path)}, which does not exist")
    return Skipped(source, f"cannot read: {exc.strerror}")


def _jsonl_lines(path: Path, stats: SourceStats | None = None) -> Iterator[tuple[int, bytes]]:
    """The file's lines as bytes (a UTF-8 byte order mark before the first left out)."""
    with path.open("rb") as handle:
        for number, line in enumerate(handle, start=1):
            if stats is not None:
                stats.bytes_read += len(line)
            yield number, line.removeprefix(codecs.BOM_UTF8) if number == 1 else line


def iter_documents(path: str | Path, options: SourceOptions, hash_settings: dict[str, dict],
                   stats: SourceStats | None = None, stored_hash: StoredHash | None = None
                   ) -> Iterator[Document | Unchanged | Skipped]:
    """Parsed documents (without chunks) and skipped inputs of `path`, in a stable order.

    `hash_settings` maps a document format to the settings folded into its content hash (chunking).
    `stored_hash(id)` gives the content hash the graph holds for a document id (None: not stored); a one-document
    file whose hash it matches is yielded as `Unchanged`, unparsed (parsing is most of a re-read's time).
    """
    root = Path(path).expanduser()
    if (problem := unreadable_path(root)) is not None:
        raise NeoweaveError(f"ingest path {problem}")
    root = root.resolve()
    if options.format not in FORMATS:
        raise NeoweaveError(f"unknown --format {options.format!r}; expected one of {', '.join(FORMATS)}")
    folder = root if root.is_dir() else root.parent
    root_url = _root_url(folder, options.base_url)
    stats = stats or SourceStats()
    wanted: list[tuple[Path, str, str]] = []
    for file in _iter_files(root):
        stats.files_seen += 1
        relative = file.relative_to(folder).as_posix()
        fmt = _file_format(file, options.format) if root.is_dir() else (
            options.format if options.format != "auto" else _EXTENSIONS.get(file.suffix.lower(), "text"))
        if fmt is None or (root.is_dir() and any(fnmatch.fnmatch(relative, p) for p in options.skip_paths)):
            stats.files_ignored += 1
            continue
        if root.is_dir() and options.format != "auto" and _EXTENSIONS.get(file.suffix.lower()) != fmt:
            stats.files_ignored += 1  # --format html over a folder reads only its HTML files
            continue
        wanted.append((file, relative, fmt))
    stats.bytes_total = sum(_size(file) for file, _, _ in wanted)
    for file, relative, fmt in wanted:
        source = str(file)
        read_before = stats.bytes_read
        try:
            yield from _parse_file(file, source, fmt, relative, root_url, options, hash_settings, stats,
                                   stored_hash)
        except Exception as exc:
            yield Skipped(source, f"could not be parsed: {type(exc).__name__}: {exc}")
        stats.bytes_read = read_before + _size(file)


def _size(file: Path) -> int:
    try:
        return file.stat().st_size
    except OSError:
        return 0


def _parse_file(file: Path, source: str, fmt: str, relative: str, root_url: str, options: SourceOptions,
                hash_settings: dict[str, dict], stats: SourceStats, stored_hash: StoredHash | None
                ) -> Iterator[Document | Unchanged | Skipped]:
    if fmt == "jsonl":
        checked = _read_checked_head(file, source)
        if isinstance(checked, Skipped):
            yield checked
            return
        yield from _with_path(records.iter_jsonl(_jsonl_lines(file, stats), source=source,
                                                 settings=hash_settings["record"],
                                                 max_record_bytes=options.max_record_bytes), file)
        return
    raw = _read_checked(file, source, options.max_file_bytes, binary=fmt in BINARY_FORMATS)
    if isinstance(raw, Skipped):
        yield raw
        return
    page_url = root_url + relative
    if fmt in BINARY_FORMATS:
        digest = _binary_hash(raw, fmt, page_url, options, hash_settings)
        if unchanged := _unchanged(stored_hash, page_url, source, file, digest):
            yield unchanged
            return
        yield from _with_path([_parse_binary(raw, source, fmt, page_url, root_url, options, digest)], file)
        return
    if fmt == "json":
        decoded = encodings.decode_json(raw)
        if isinstance(decoded, encodings.Undecodable):
            yield Skipped(source, decoded.reason)
            return
        yield from _with_path(records.iter_json(decoded.text, source=source, settings=hash_settings["record"]),
                              file)
        return
    if fmt == "html":
        digest = content_hash(raw, {**hash_settings["html"], "parser": html.PARSER_VERSION,
                                    "html": repr(options.html), "url": page_url})
        if unchanged := _unchanged(stored_hash, page_url, source, file, digest):
            yield unchanged
            return
        page = html.read_page(raw)
        if isinstance(page, Skipped):
            yield Skipped(source, page.reason)
            return
        result = html.parse_html(page.text, doc_id=page_url, page_url=page_url, root_url=root_url,
                                 source=source, content_hash=digest, options=options.html)
    else:
        markdown = fmt == "markdown"
        digest = content_hash(raw, {**hash_settings["markdown" if markdown else "text"],
                                    "parser": text.PARSER_VERSION, "url": page_url})
        if unchanged := _unchanged(stored_hash, page_url, source, file, digest):
            yield unchanged
            return
        page = encodings.decode_text(raw)
        if isinstance(page, encodings.Undecodable):
            yield Skipped(source, page.reason)
            return
        result = text.parse_text(page.text, doc_id=page_url, page_url=page_url, root_url=root_url, source=source,
                                 content_hash=digest, markdown=markdown,
                                 context_words=options.html.context_words)
    if isinstance(result, Document):
        result.metadata["encoding"] = page.encoding  # a Document property (plain metadata values are)
    yield from _with_path([result], file)


def _unchanged(stored_hash: StoredHash | None, doc_id: str, source: str, file: Path, digest: str
               ) -> Unchanged | None:
    """The file as `Unchanged` when the graph holds its document with this content hash (it need not be parsed)."""
    if stored_hash is not None and stored_hash(doc_id) == digest:
        return Unchanged(doc_id, source, str(file), digest)
    return None


def _binary_hash(raw: bytes, fmt: str, page_url: str, options: SourceOptions, hash_settings: dict[str, dict]
                 ) -> str:
    from neoweave.ingest import docx, pdf

    version = pdf.PARSER_VERSION if fmt == "pdf" else docx.PARSER_VERSION
    settings = hash_settings.get(fmt, hash_settings.get("text", {}))  # callers that predate the format
    return content_hash(raw, {**settings, "parser": version, "url": page_url,
                              "context_words": options.html.context_words})


def _parse_binary(raw: bytes, source: str, fmt: str, page_url: str, root_url: str, options: SourceOptions,
                  digest: str) -> Document | Skipped:
    """PDF and DOCX: their parsers import their libraries only now (a missing one skips the file, naming the
    extra that installs it)."""
    from neoweave.ingest import docx, pdf

    parser = pdf.parse_pdf if fmt == "pdf" else docx.parse_docx
    return parser(raw, doc_id=page_url, page_url=page_url, root_url=root_url, source=source, content_hash=digest,
                  context_words=options.html.context_words)


def _read_checked_head(path: Path, source: str) -> Skipped | None:
    try:
        size = path.stat().st_size
        with path.open("rb") as handle:
            head = handle.read(8192)
    except OSError as exc:
        return _unreadable(path, source, exc)
    if size == 0:
        return Skipped(source, "empty file (0 bytes)")
    marked = encodings.byte_order_mark(head)
    if marked is not None and marked[1] != "utf-8-sig":
        unicode = marked[1][:6]  # utf-16 or utf-32: iconv reads the mark
        return Skipped(source, f"JSON Lines are read as UTF-8 and this file is {marked[1].upper()} (its byte order "
                               f"mark): convert it, e.g. `iconv -f {unicode} -t utf-8`")
    if b"\x00" in head:
        return Skipped(source, "binary file (contains NUL bytes)")
    return None


def _with_path(items, file: Path) -> Iterator[Document | Skipped]:
    for item in items:
        if isinstance(item, Document):
            item.path = str(file)
        yield item
