"""Plain text and Markdown files. Markdown headings become sections; Markdown links become links."""

from __future__ import annotations

import re
from urllib.parse import urldefrag, urljoin

from neoweave.ingest.documents import Document, Link, Section, Skipped
from neoweave.nlp.link_context import link_context

PARSER_VERSION = "text-1"
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)
_FENCE = re.compile(r"^(```|~~~).*?^\1[ \t]*$", re.MULTILINE | re.DOTALL)
_MD_LINK = re.compile(r"(?<!!)\[([^\]\n]+)\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slugify(title: str) -> str:
    """GitHub-style heading anchor."""
    slug = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return re.sub(r"\s", "-", slug)


def _links(text: str, page_url: str, root_url: str, context_words: int) -> tuple[str, list[Link]]:
    """Replace Markdown links by their text and record them with offsets into the new text."""
    links: list[tuple[str, int, int]] = []
    parts: list[str] = []
    cursor = 0
    length = 0
    for match in _MD_LINK.finditer(text):
        parts.append(text[cursor:match.start()])
        length += match.start() - cursor
        label = match.group(1)
        links.append((match.group(2), length, length + len(label)))
        parts.append(label)
        length += len(label)
        cursor = match.end()
    parts.append(text[cursor:])
    plain = "".join(parts)
    result = []
    for href, start, end in links:
        if href.startswith(("mailto:", "javascript:")):
            continue
        target, fragment = urldefrag(urljoin(page_url, href))
        result.append(Link(target_url=target, anchor=fragment, text=plain[start:end],
                           context=link_context(plain, start, end, context_words), start=start, end=end,
                           internal=target.startswith(root_url)))
    return plain, result


def parse_text(text: str, *, doc_id: str, page_url: str, root_url: str, source: str, content_hash: str,
               markdown: bool, context_words: int = 12) -> Document | Skipped:
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not text.strip():
        return Skipped(source, "no text content")
    file_title = doc_id.rsplit("/", 1)[-1]
    if not markdown:
        body = text.strip()
        section = Section(id=f"{doc_id}#_s0", anchor="", title=file_title, url=page_url, order=0, level=0,
                          text=body, start=0, end=len(body))
        return Document(id=doc_id, title=file_title, url=page_url, source=source, format="text",
                        content_hash=content_hash, sections=[section])

    fenced = [(m.start(), m.end()) for m in _FENCE.finditer(text)]
    headings = [m for m in _HEADING.finditer(text)
                if not any(start <= m.start() < end for start, end in fenced)]
    bounds: list[tuple[int, int, str, int]] = []  # (start, end, title, level)
    if not headings or headings[0].start() > 0:
        bounds.append((0, headings[0].start() if headings else len(text), "", 0))
    for index, match in enumerate(headings):
        end = headings[index + 1].start() if index + 1 < len(headings) else len(text)
        bounds.append((match.start(), end, match.group(2).strip(), len(match.group(1))))

    sections: list[Section] = []
    seen: dict[str, int] = {}
    offset = 0
    for start, end, title, level in bounds:
        chunk = text[start:end].strip()
        if not chunk:
            continue
        anchor = ""
        if title:
            base = slugify(title) or "section"
            count = seen.get(base, 0)
            seen[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
        body, links = _links(chunk, page_url, root_url, context_words)
        order = len(sections)
        sections.append(Section(
            id=f"{doc_id}#{anchor}" if anchor else f"{doc_id}#_s{order}", anchor=anchor,
            title=title or file_title, url=f"{page_url}#{anchor}" if anchor else page_url, order=order,
            level=level, text=body, start=offset, end=offset + len(body), links=links,
        ))
        offset += len(body) + 2
    title = next((s.title for s in sections if s.level == 1), file_title)
    return Document(id=doc_id, title=title, url=page_url, source=source, format="markdown",
                    content_hash=content_hash, sections=sections)
