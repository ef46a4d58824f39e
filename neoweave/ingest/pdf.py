"""PDF files into sections with their links and page provenance.

Library: pypdf (7.x). It is pure Python (installs anywhere, nothing downloaded at run time), reads outlines, named
destinations and link annotations, opens files encrypted with an empty password, and reports every text run
with its position and font size, which is all this parser needs. pdfplumber (on pdfminer.six) has finer
character boxes but also requires pypdfium2's binary and Pillow, for page rendering neoweave never does.

Sections come from the outline (bookmarks, nested levels) where the PDF has one; else from lines set larger
than the body text (headings); else one section per page. A section's URL opens its first page
(`file.pdf#page=3`, the PDF open parameter viewers follow), `Section.pages` keeps its first and last page (graph:
`page_start`, `page_end`), and every page is a link target (`#page=N`), so links into a PDF from other documents
resolve. Link annotations (read in `pdf_links`) become links: to a page or destination inside the file
(LINKS_TO between sections), to another file, or to a URL. A
link's text is the text line under its rectangle (pypdf reports text by line, not by character). Tables are
read as their text. Encrypted, textless (scanned) and truncated or corrupt files are skipped with the reason.
"""

from __future__ import annotations

import bisect
import io
import logging
import math
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag

from neoweave.ingest.documents import Document, Link, Section, Skipped
from neoweave.ingest.pdf_links import link_annotations, number
from neoweave.ingest.text import slugify
from neoweave.nlp.link_context import link_context

PARSER_VERSION = "pdf-1"
EXTRA = "documents"
_HEADING_RATIO = 1.15  # a heading line is set at least this much larger than the body text
_TOP_SLACK = 2.0  # points: a destination's top lies just above the line it shows


@dataclass
class _Run:
    """A piece of text as pypdf emits it (about a line): its span in the document text, page, origin and size."""

    start: int
    end: int
    page: int
    x: float
    y: float
    size: float
    newline: bool


@dataclass
class _Text:
    """The document text (pages joined by a blank line), where each page starts, and the text runs."""

    text: str
    starts: list[int]
    runs: list[_Run]
    by_page: list[list[_Run]] = field(default_factory=list)  # the runs with visible text, per page

    def __post_init__(self) -> None:
        self.by_page = [[] for _ in self.starts]
        for run in self.runs:
            if self.text[run.start:run.end].strip():
                self.by_page[run.page].append(run)

    def offset_at(self, page: int, top: float | None) -> int:
        """Where a destination (page, top) falls: the first line at or below `top`, else the page start."""
        if top is not None:
            for run in self.by_page[page]:
                if run.y <= top + _TOP_SLACK:
                    return run.start
        return self.starts[page]

    def under(self, page: int, rect: list[float]) -> tuple[int, int]:
        """The span of the text line under a link rectangle (the nearest line of its page when none is)."""
        x0, y0, x1, y1 = rect
        x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        candidates = self.by_page[page]
        if not candidates:
            return self.starts[page], self.starts[page]
        under = [r for r in candidates if y0 - 3 <= r.y <= y1 + 3 and r.x <= x1 + 2]
        # of the lines under it, the one starting closest to the link (columns side by side)
        run = max(under, key=lambda r: r.x) if under else min(candidates, key=lambda r: abs(r.y - (y0 + y1) / 2))
        piece = self.text[run.start:run.end]
        start = run.start + len(piece) - len(piece.lstrip())
        return start, start + len(piece.strip())


@dataclass
class _Cut:
    """Where a section starts in the document text."""

    offset: int
    title: str
    level: int
    anchor: str | None = None  # None: a slug of the title
    key: tuple[int, int] | None = None  # (page, top) of the outline destination it came from


@dataclass
class _Bound:
    start: int
    end: int
    title: str
    level: int
    anchor: str
    key: tuple[int, int] | None = None
    anchors: list[str] = field(default_factory=list)


def parse_pdf(raw: bytes, *, doc_id: str, page_url: str, root_url: str, source: str, content_hash: str,
              context_words: int = 12) -> Document | Skipped:
    """One PDF as a Document with sections and links (no chunks yet), or the reason it cannot be read."""
    try:
        import pypdf
        from pypdf.errors import DependencyError
    except ImportError:
        return Skipped(source, f"PDF support is not installed: pip install 'neoweave[{EXTRA}]' (pypdf)")
    if b"%PDF-" not in raw[:1024]:
        return Skipped(source, "not a PDF file (no %PDF- header)")
    if b"%%EOF" not in raw.rstrip(b"\x00\t\n\r\x0c ")[-2048:]:
        return Skipped(source, "truncated PDF: no %%EOF marker at the end (an incomplete download or copy?)")
    _quiet_pypdf()
    try:
        reader = pypdf.PdfReader(io.BytesIO(raw), strict=False)
        if reader.is_encrypted and not reader.decrypt(""):
            return Skipped(source, "encrypted PDF: it needs a password (an empty password does not open it)")
        text = _extract(reader)
        if not text.text.strip():
            return Skipped(source, f"no extractable text in {len(text.starts)} page(s): a scanned PDF without a "
                                   "text layer? (neoweave does no OCR; run one first)")
        return _build(reader, text, doc_id=doc_id, page_url=page_url, root_url=root_url, source=source,
                      content_hash=content_hash, context_words=context_words)
    except DependencyError as exc:
        return Skipped(source, f"encrypted PDF that pypdf cannot decrypt here: {exc} "
                               f"(pip install 'neoweave[{EXTRA}]')")
    except Exception as exc:  # pypdf raises many types on damaged files; none may stop the ingest
        return Skipped(source, f"corrupt PDF: {type(exc).__name__}: {exc}")


def _quiet_pypdf() -> None:
    """pypdf logs every repaired defect as a warning (noise over the progress bars); unless the user set its
    logger up, keep only errors."""
    logger = logging.getLogger("pypdf")
    if logger.level == logging.NOTSET:
        logger.setLevel(logging.ERROR)


def _mult(m: list[float], n: list[float]) -> list[float]:
    return [m[0] * n[0] + m[1] * n[2], m[0] * n[1] + m[1] * n[3], m[2] * n[0] + m[3] * n[2],
            m[2] * n[1] + m[3] * n[3], m[4] * n[0] + m[5] * n[2] + n[4], m[4] * n[1] + m[5] * n[3] + n[5]]


def _extract(reader: Any) -> _Text:
    parts: list[str] = []
    runs: list[_Run] = []
    page_starts: list[int] = []
    length = 0
    for index, page in enumerate(reader.pages):
        if index:
            parts.append("\n\n")
            length += 2
        page_starts.append(length)

        def visit(text: str, cm: Any, tm: Any, _font: Any, size: Any, index: int = index) -> None:
            nonlocal length
            if not text:
                return
            try:
                m = _mult([float(v) for v in tm], [float(v) for v in cm])
                x, y, scale = m[4], m[5], math.hypot(m[2], m[3])
            except (TypeError, ValueError, IndexError):
                x, y, scale = 0.0, 0.0, 1.0
            runs.append(_Run(length, length + len(text), index, x, y, abs(float(size or 0) * scale),
                             text.endswith("\n")))
            parts.append(text)
            length += len(text)

        page.extract_text(visitor_text=visit)
    return _Text("".join(parts), page_starts, runs)


def _build(reader: Any, extracted: _Text, *, doc_id: str, page_url: str, root_url: str, source: str,
           content_hash: str, context_words: int) -> Document:
    text, page_starts = extracted.text, extracted.starts
    title = _metadata_title(reader) or _cover_title(text, extracted.runs) or doc_id.rsplit("/", 1)[-1]
    cuts = _outline_cuts(reader, extracted) or _heading_cuts(text, extracted.runs)
    if not cuts:
        cuts = [_Cut(start, f"{title}, page {n}", 1, f"page={n}") for n, start in enumerate(page_starts, 1)]
    bounds = _bounds(text, cuts)
    for page, start in enumerate(page_starts, 1):  # every page is a link target: `file.pdf#page=N`
        holder = _holder(bounds, start)
        if holder is not None and holder.anchor != f"page={page}":
            holder.anchors.append(f"page={page}")
    raw_links = _links(reader, extracted, bounds, page_url, root_url)
    sections: list[Section] = []
    offset = 0
    for bound in bounds:
        piece = text[bound.start:bound.end]
        body = piece.strip()
        lead = bound.start + len(piece) - len(piece.lstrip())
        first = bisect.bisect_right(page_starts, lead)
        last = bisect.bisect_right(page_starts, max(lead, lead + len(body) - 1))
        links = []
        for start, end, target, anchor, internal in raw_links:
            if lead <= start < lead + max(len(body), 1):
                local, local_end = start - lead, min(end, lead + len(body)) - lead
                links.append(Link(target_url=target, anchor=anchor, text=body[local:local_end].strip(),
                                  context=link_context(body, local, local_end, context_words), start=local,
                                  end=local_end, internal=internal))
        order = len(sections)
        sections.append(Section(
            id=f"{doc_id}#{bound.anchor}" if bound.anchor else f"{doc_id}#_s{order}", anchor=bound.anchor,
            title=bound.title or title, url=f"{page_url}#page={first}", order=order,
            level=bound.level, text=body, start=offset, end=offset + len(body), links=links, anchors=bound.anchors,
            pages=(first, last),
        ))
        offset += len(body) + 2
    return Document(id=doc_id, title=title, url=page_url, source=source, format="pdf", content_hash=content_hash,
                    sections=sections, metadata={"page_count": len(page_starts)})


def _metadata_title(reader: Any) -> str:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:
        return ""
    return " ".join(str(title).split()) if title else ""


def _cover_title(text: str, runs: list[_Run]) -> str:
    """The largest line of the first page, when it is set larger than most of that page's text (a title page)."""
    lines = [line for line in _lines(text, [r for r in runs if r.page == 0]) if text[line[0]:line[1]].strip()]
    if len(lines) < 2:
        return ""
    body = _body_size(text, lines)
    start, end, _, _, size = max(lines, key=lambda line: line[4])
    title = " ".join(text[start:end].split())
    return title if size >= body * _HEADING_RATIO and len(title) <= 120 else ""


def _body_size(text: str, lines: list[tuple[int, int, int, float, float]]) -> float:
    """The font size most characters are set in."""
    weight: dict[float, int] = {}
    for start, end, _, _, size in lines:
        weight[round(size * 2) / 2] = weight.get(round(size * 2) / 2, 0) + end - start
    return max(weight, key=lambda size: weight[size])


def _lines(text: str, runs: list[_Run]) -> list[tuple[int, int, int, float, float]]:
    """(start, end, page, y, size) per text line: runs up to one that ends the line."""
    lines = []
    current: list[_Run] = []
    for index, run in enumerate(runs):
        current.append(run)
        if run.newline or index + 1 == len(runs) or runs[index + 1].page != run.page:
            visible = [r for r in current if text[r.start:r.end].strip()] or current
            lines.append((current[0].start, current[-1].end, current[0].page, visible[0].y,
                          max(r.size for r in visible)))
            current = []
    return lines


def _outline_cuts(reader: Any, extracted: _Text) -> list[_Cut]:
    text, page_starts = extracted.text, extracted.starts
    try:
        entries = list(_outline_entries(reader, reader.outline, 1))
    except Exception:
        return []
    cuts = []
    for index, (title, level, page, top) in enumerate(entries):
        if page is None or not 0 <= page < len(page_starts) or not title:
            continue
        offset = extracted.offset_at(page, top) if top is not None else None
        if offset is None:  # no position: the title's line on its page, else the page start
            end = page_starts[page + 1] if page + 1 < len(page_starts) else len(text)
            words = [re.escape(word) for word in title.split()]
            found = re.compile(r"\s+".join(words), re.IGNORECASE).search(text, page_starts[page], end)
            offset = text.rfind("\n", page_starts[page], found.start()) + 1 if found else page_starts[page]
            offset = max(offset, page_starts[page])
        key = (page, round(top)) if top is not None else None
        cuts.append((offset, index, _Cut(offset, title, min(level, 6), key=key)))
    return [cut for _, _, cut in sorted(cuts, key=lambda item: item[:2])]


def _outline_entries(reader: Any, items: list, level: int):
    """(title, level, page index, top) of every outline item, depth first; a nested list holds the children."""
    for item in items:
        if isinstance(item, list):
            yield from _outline_entries(reader, item, level + 1)
            continue
        title = " ".join(str(item.title or "").split())
        top = number(item.top) if item.get("/Type") in ("/XYZ", "/FitH", "/FitBH") else None
        yield title, level, reader.get_destination_page_number(item), top


def _heading_cuts(text: str, runs: list[_Run]) -> list[_Cut]:
    """Lines set larger than the body text (the size most characters have) are headings; larger is higher."""
    lines = [line for line in _lines(text, runs) if text[line[0]:line[1]].strip()]
    if not lines:
        return []
    body = _body_size(text, lines)
    heads = [line for line in lines if body > 0 and line[4] >= body * _HEADING_RATIO
             and 0 < len(text[line[0]:line[1]].strip()) <= 120 and re.search(r"[^\W\d_]", text[line[0]:line[1]])]
    if not heads or len(heads) > max(3, len(lines) * 0.3):
        return []  # no headings, or so many large lines that size says nothing
    levels = {size: rank for rank, size in enumerate(sorted({round(h[4] * 2) / 2 for h in heads}, reverse=True), 1)}
    cuts: list[_Cut] = []
    for start, end, _, _, size in heads:
        title, level = " ".join(text[start:end].split()), min(levels[round(size * 2) / 2], 6)
        previous = cuts[-1] if cuts else None
        if previous and previous.level == level and " ".join(text[previous.offset:start].split()) == previous.title:
            previous.title = f"{previous.title} {title}"  # a heading set on two lines
            continue
        cuts.append(_Cut(start, title, level))
    return cuts


def _bounds(text: str, cuts: list[_Cut]) -> list[_Bound]:
    """Section spans of the document text: text before the first cut (if any) and from each cut to the next."""
    bounds = []
    if cuts[0].offset > 0 and text[:cuts[0].offset].strip():
        bounds.append(_Bound(0, cuts[0].offset, "", 0, ""))
    seen: dict[str, int] = {}
    for index, cut in enumerate(cuts):
        end = cuts[index + 1].offset if index + 1 < len(cuts) else len(text)
        anchor = cut.anchor
        if anchor is None:
            base = slugify(cut.title) or "section"
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
        bounds.append(_Bound(cut.offset, max(end, cut.offset), cut.title, cut.level, anchor, cut.key))
    return bounds


def _holder(bounds: list[_Bound], offset: int) -> _Bound | None:
    """The section holding a position: the first whose span contains it, or an empty one starting there."""
    for bound in bounds:
        if bound.start <= offset < bound.end or bound.start == bound.end == offset:
            return bound
    return bounds[-1] if bounds and offset >= bounds[-1].start else None


def _links(reader: Any, extracted: _Text, bounds: list[_Bound], page_url: str, root_url: str
           ) -> list[tuple[int, int, str, str, bool]]:
    """(start, end, target url, anchor, internal) of every link annotation, placed at the text under it; a link
    into the file points at the section its destination falls in (an outline entry's own section if it is one)."""
    by_key = {bound.key: bound.anchor for bound in bounds if bound.key is not None}
    found = []
    for page, rect, target in link_annotations(reader, page_url):
        if target[0] == "page":
            index, top = target[1], target[2]
            if index is None or not 0 <= index < len(extracted.starts):
                continue
            anchor = by_key.get((index, round(top))) if top is not None else None
            if anchor is None:
                holder = _holder(bounds, extracted.offset_at(index, top))
                anchor = holder.anchor if holder is not None else ""
            url, internal = page_url, True
        else:
            url, fragment = urldefrag(target[1])
            anchor = target[2] if target[2] is not None else fragment
            internal = url.startswith(root_url)
        found.append((*extracted.under(page, rect), url, anchor, internal))
    return found
