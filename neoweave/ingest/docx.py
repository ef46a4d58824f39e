"""Word (.docx) files into sections with their links, via python-docx (pure Python over lxml).

Heading paragraphs start sections: the styles Title and Heading 1-9, styles based on them, and paragraphs or
styles with an outline level. Paragraphs are the text; a table is read row by row, its cells joined by " | ".
Hyperlinks to a bookmark in the file become links between sections (every bookmark inside a section is a link
target, as element ids are in HTML); hyperlinks to a URL or another file become links to it. The core
properties' title, when set, is the document's title. Word does not store page numbers (pagination is
computed by the application), so DOCX sections carry none.
"""

from __future__ import annotations

import io
import re
import zipfile
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin

from neoweave.ingest.documents import Document, Link, Section, Skipped
from neoweave.ingest.text import slugify
from neoweave.nlp.link_context import link_context

PARSER_VERSION = "docx-1"
EXTRA = "documents"
_HEADING_STYLE = re.compile(r"^heading\s*([1-9])$", re.IGNORECASE)
_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"


@dataclass
class _Block:
    """A section in the making: its heading and the text under it, with link spans and bookmarks."""

    title: str
    level: int
    parts: list[str] = field(default_factory=list)
    length: int = 0
    links: list[tuple[str, str, bool, int, int]] = field(default_factory=list)  # (url, anchor, internal, span)
    bookmarks: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.parts.append(text)
        self.length += len(text)

    def separate(self, separator: str) -> None:
        if self.length:
            self.add(separator)


def parse_docx(raw: bytes, *, doc_id: str, page_url: str, root_url: str, source: str, content_hash: str,
               context_words: int = 12, max_unpacked_bytes: int = 200 * 1024 * 1024) -> Document | Skipped:
    """One .docx as a Document with sections and links (no chunks yet), or the reason it cannot be read."""
    try:
        import docx
    except ImportError:
        return Skipped(source, f"DOCX support is not installed: pip install 'neoweave[{EXTRA}]' (python-docx)")
    if raw.startswith(b"\xd0\xcf\x11\xe0"):
        return Skipped(source, "not a DOCX file: an OLE compound file (a password-protected .docx or a legacy "
                               ".doc); save it unencrypted as .docx")
    if not raw.startswith(b"PK"):
        return Skipped(source, "not a DOCX file (not a ZIP archive)")
    try:
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            unpacked = sum(info.file_size for info in archive.infolist())
            if "[Content_Types].xml" not in archive.namelist():
                return Skipped(source, "not a DOCX file: a ZIP archive without Office content types")
    except zipfile.BadZipFile as exc:
        return Skipped(source, f"corrupt DOCX: damaged or truncated ZIP archive ({exc})")
    if unpacked > max_unpacked_bytes:
        return Skipped(source, f"DOCX unpacks to {unpacked} bytes, over the limit of {max_unpacked_bytes}")
    try:
        document = docx.Document(io.BytesIO(raw))
        blocks = _blocks(document, page_url, root_url)
        title = _core_title(document)
    except Exception as exc:  # python-docx and lxml raise many types on damaged parts
        return Skipped(source, f"corrupt DOCX: {type(exc).__name__}: {exc}")
    return _build(blocks, title, doc_id=doc_id, page_url=page_url, source=source, content_hash=content_hash,
                  context_words=context_words)


def _core_title(document: Any) -> str:
    try:
        return " ".join((document.core_properties.title or "").split())
    except Exception:
        return ""


def _outline_level(element: Any) -> int | None:
    """The outline level a paragraph or style sets (w:outlineLvl, 0-based; 9 means body text)."""
    ppr = element.find(f"{_W}pPr")
    found = ppr.find(f"{_W}outlineLvl") if ppr is not None else None
    value = found.get(f"{_W}val") if found is not None else None
    if value is None or not value.isdigit() or int(value) > 8:
        return None
    return int(value) + 1


def _heading_level(paragraph: Any) -> int | None:
    """1-9 for a heading paragraph (by its outline level, its style or a style it is based on), else None."""
    level = _outline_level(paragraph._p)
    if level is not None:
        return level
    style, depth = paragraph.style, 0
    while style is not None and depth < 10:
        name = (style.name or "").strip()
        match = _HEADING_STYLE.match(name)
        if match:
            return int(match.group(1))
        if name.lower() == "title":
            return 1
        level = _outline_level(style.element)
        if level is not None:
            return level
        style, depth = style.base_style, depth + 1
    return None


def _bookmarks(element: Any) -> list[str]:
    """Bookmark names inside an element (Word's own `_GoBack`, the last edit position, left out)."""
    names = (bookmark.get(f"{_W}name") for bookmark in element.iter(f"{_W}bookmarkStart"))
    return [name for name in names if name and name != "_GoBack"]


def _paragraph(paragraph: Any, block: _Block, page_url: str, root_url: str) -> None:
    """A paragraph's text into the block, recording its hyperlinks and bookmarks."""
    from docx.text.hyperlink import Hyperlink

    block.bookmarks.extend(_bookmarks(paragraph._p))
    for item in paragraph.iter_inner_content():
        text = item.text or ""
        if not isinstance(item, Hyperlink):
            block.add(text)
            continue
        start = block.length
        block.add(text)
        target = _hyperlink_target(item, page_url, root_url)
        if target is not None and text.strip():
            block.links.append((*target, start, block.length))


def _hyperlink_target(link: Any, page_url: str, root_url: str) -> tuple[str, str, bool] | None:
    try:
        address = link.address
    except Exception:
        return None  # a relationship the file lacks
    fragment = link.fragment
    if not address:
        return (page_url, "" if fragment == "_top" else fragment, True) if fragment else None
    if address.startswith(("mailto:", "javascript:", "tel:")):
        return None
    target, anchor = urldefrag(urljoin(page_url, f"{address}#{fragment}" if fragment else address))
    return target, anchor, target.startswith(root_url)


def _table(table: Any, block: _Block, page_url: str, root_url: str, row_separator: str = "\n") -> None:
    """A table row by row (one line each), cells joined by " | "; merged cells once; nested tables inline."""
    from docx.table import Table

    for index, row in enumerate(table.rows):
        if index:
            block.add(row_separator)
        seen: list[Any] = []
        for cell in row.cells:
            if any(cell._tc is other for other in seen):
                continue  # a merged cell is returned once per grid column it spans
            seen.append(cell._tc)
            if len(seen) > 1:
                block.add(" | ")
            first = True
            for item in cell.iter_inner_content():
                if not first:
                    block.add(" ")
                first = False
                if isinstance(item, Table):
                    _table(item, block, page_url, root_url, "; ")
                else:
                    _paragraph(item, block, page_url, root_url)


def _blocks(document: Any, page_url: str, root_url: str) -> list[_Block]:
    from docx.table import Table

    blocks = [_Block("", 0)]
    for item in document.iter_inner_content():
        if isinstance(item, Table):
            blocks[-1].separate("\n\n")
            _table(item, blocks[-1], page_url, root_url)
            continue
        if not item.text.strip():
            blocks[-1].bookmarks.extend(_bookmarks(item._p))  # an empty paragraph may still be a link target
            continue
        level = _heading_level(item)
        if level is not None:
            blocks.append(_Block(" ".join(item.text.split()), level))
        blocks[-1].separate("\n\n")
        _paragraph(item, blocks[-1], page_url, root_url)
    return blocks


def _build(blocks: list[_Block], title: str, *, doc_id: str, page_url: str, source: str, content_hash: str,
           context_words: int) -> Document | Skipped:
    file_title = doc_id.rsplit("/", 1)[-1]
    heading_title = next((b.title for b in blocks if b.level == 1), "")
    title = title or heading_title or file_title
    sections: list[Section] = []
    seen: dict[str, int] = {}
    offset = 0
    for block in blocks:
        full = "".join(block.parts)
        body = full.strip()
        if not block.title and not body:
            continue  # no text before the first heading
        lead = len(full) - len(full.lstrip())
        anchor = ""
        if block.title:
            base = slugify(block.title) or "section"
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
        links = []
        for target, fragment, internal, start, end in block.links:
            start, end = max(start - lead, 0), min(end - lead, len(body))
            links.append(Link(target_url=target, anchor=fragment, text=body[start:end].strip(),
                              context=link_context(body, start, end, context_words), start=start, end=end,
                              internal=internal))
        order = len(sections)
        sections.append(Section(
            id=f"{doc_id}#{anchor}" if anchor else f"{doc_id}#_s{order}", anchor=anchor,
            title=block.title or title, url=f"{page_url}#{anchor}" if anchor else page_url, order=order,
            level=block.level, text=body, start=offset, end=offset + len(body), links=links,
            anchors=list(dict.fromkeys(block.bookmarks)),
        ))
        offset += len(body) + 2
    if not any(section.text for section in sections):
        return Skipped(source, "no text content (an empty document)")
    return Document(id=doc_id, title=title, url=page_url, source=source, format="docx", content_hash=content_hash,
                    sections=sections)
