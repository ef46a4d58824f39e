"""Hyperlinked HTML documentation (Sphinx and similar) into sections with their links.

A page is split at its section elements (`<section id>`, Sphinx's `div.section`); each section keeps its own
text (nested sections are separate), its title and anchor, every element id inside it (links may point at
any of them, e.g. Sphinx's `<dt id="asyncio.create_task">`), and every hyperlink with the words around it.
Navigation chrome is removed first by configurable selectors with Sphinx defaults.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urldefrag, urljoin

from bs4 import BeautifulSoup, Comment, Doctype, NavigableString, ProcessingInstruction, Tag

from neoweave.ingest.documents import Document, Link, Section, Skipped
from neoweave.ingest.encodings import Decoded, Undecodable, decode_text
from neoweave.nlp.link_context import link_context

PARSER_VERSION = "html-1"

_BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "br", "caption", "dd", "div", "dl", "dt", "figcaption",
    "figure", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "li", "main", "ol", "p", "pre", "section", "table",
    "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
})
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_SPACE = re.compile(r"\s+")
_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:\-]+)", re.IGNORECASE)
_XML_ENCODING = re.compile(rb"\s*<\?xml[^>]+encoding=[\"']([A-Za-z0-9_.:\-]+)", re.IGNORECASE)


@dataclass(frozen=True)
class HtmlOptions:
    """How pages are read. Defaults suit Sphinx output; every rule can be replaced."""

    context_words: int = 12
    """Words of link context kept around the anchor text (half before, half after)."""
    remove_selectors: tuple[str, ...] = (
        "script", "style", "noscript", "nav", "header", "footer", "div.sphinxsidebar", "div.related",
        "div.footer", "div.navigation", "a.headerlink", "div.clearer", "form", "button",
    )
    """CSS selectors of chrome removed before reading text (sidebars, headers, footers, permalinks)."""
    content_selectors: tuple[str, ...] = ('[role="main"]', "div.body", "main", "article", "body")
    """The first selector that matches gives the page's content root."""
    unwrap_link_selectors: tuple[str, ...] = ("a.toc-backref",)
    """Links that are navigation (their text is kept, the link is not)."""


def declared_charset(raw: bytes) -> str | None:
    """The charset a page declares in its first 4 kB (`<meta charset>`, `<meta http-equiv ... charset=...>`, an
    XML declaration's `encoding`)."""
    head = raw[:4096]
    found = _XML_ENCODING.match(head) or _CHARSET.search(head)
    return found.group(1).decode("ascii") if found else None


def read_page(raw: bytes) -> Decoded | Skipped:
    """A page's text and the encoding that read it (`encodings.decode_text`, honouring the declared charset);
    otherwise a reason to skip."""
    decoded = decode_text(raw, declared_charset(raw))
    return Skipped("", decoded.reason) if isinstance(decoded, Undecodable) else decoded


def decode_html(raw: bytes) -> str | Skipped:
    """A page's text (`read_page` without the encoding)."""
    page = read_page(raw)
    return page.text if isinstance(page, Decoded) else page


class _TextBuilder:
    """Accumulates visible text with collapsed whitespace, so recorded offsets match the final text."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.last = "\n"

    def add(self, text: str, preformatted: bool) -> None:
        if not preformatted:
            text = _SPACE.sub(" ", text)
            if text.startswith(" ") and self.last in " \n":
                text = text[1:]
        if text:
            self.parts.append(text)
            self.length += len(text)
            self.last = text[-1]

    def newline(self) -> None:
        if self.last != "\n":
            if self.last == " ":  # drop a trailing space before the line break
                self.parts[-1] = self.parts[-1][:-1]
                self.length -= 1
            self.parts.append("\n")
            self.length += 1
            self.last = "\n"

    def text(self) -> str:
        return "".join(self.parts)


_SIMPLE_SELECTOR = re.compile(r"^(?P<tag>[a-zA-Z][\w-]*)?(?:\.(?P<cls>[\w-]+))?"
                              r"(?:\[(?P<attr>[\w-]+)=[\"']?(?P<value>[^\"'\]]*)[\"']?\])?$")


def _compile(selector: str):
    """A predicate for simple selectors (tag, .class, tag.class, [attr=value]); None when not simple."""
    match = _SIMPLE_SELECTOR.match(selector.strip())
    if not match or not any(match.groupdict().values()):
        return None
    tag, cls, attr, value = match.group("tag"), match.group("cls"), match.group("attr"), match.group("value")

    def predicate(element: Tag) -> bool:
        if tag and element.name != tag:
            return False
        if cls and cls not in (element.get("class") or ()):
            return False
        return not attr or element.get(attr) == value

    return predicate


def _select_all(root: Tag, selectors: tuple[str, ...]) -> list[Tag]:
    """Elements matching any selector: simple selectors in one pass over the tree (soupsieve's per-selector
    scans dominated parse time), anything else through soupsieve."""
    predicates = []
    found: list[Tag] = []
    for selector in selectors:
        predicate = _compile(selector)
        if predicate is None:
            found.extend(root.select(selector))
        else:
            predicates.append(predicate)
    if predicates:
        found.extend(el for el in root.find_all(True) if any(p(el) for p in predicates))
    return found


def _select_first(soup: BeautifulSoup, selectors: tuple[str, ...]) -> Tag | None:
    """The first selector (in priority order) that matches anything gives the element."""
    tags = None
    for selector in selectors:
        predicate = _compile(selector)
        if predicate is None:
            element = soup.select_one(selector)
        else:
            tags = tags if tags is not None else soup.find_all(True)
            element = next((el for el in tags if predicate(el)), None)
        if element is not None:
            return element
    return None


def _is_section(tag: Tag) -> bool:
    if tag.name == "section":
        return True
    return tag.name == "div" and "section" in (tag.get("class") or [])


def _walk(node: Tag, builder: _TextBuilder, anchors: list[str], links: list[tuple[str, int, int]],
          preformatted: bool = False) -> None:
    for child in node.children:
        if isinstance(child, Comment | Doctype | ProcessingInstruction):
            continue
        if isinstance(child, NavigableString):
            builder.add(str(child), preformatted)
            continue
        if not isinstance(child, Tag) or (_is_section(child) and child.get("id")):
            continue  # nested sections are sections of their own
        element_id = child.get("id")
        if element_id:
            anchors.append(str(element_id))
        block = child.name in _BLOCK_TAGS
        if block:
            builder.newline()
        pre = preformatted or child.name == "pre"
        href = child.get("href") if child.name == "a" else None
        if href:
            start = builder.length
            _walk(child, builder, anchors, links, pre)
            links.append((str(href), start, builder.length))
        else:
            _walk(child, builder, anchors, links, pre)
        if block:
            builder.newline()


def _title(tag: Tag) -> str:
    for child in tag.find_all(_HEADINGS, recursive=True, limit=1):
        return _SPACE.sub(" ", child.get_text(" ")).strip()
    return ""


def _section_level(tag: Tag, root: Tag) -> int:
    level = 1
    for parent in tag.parents:
        if parent is root:
            break
        if isinstance(parent, Tag) and _is_section(parent):
            level += 1
    return level


def parse_html(
    text: str,
    *,
    doc_id: str,
    page_url: str,
    root_url: str,
    source: str,
    content_hash: str,
    options: HtmlOptions,
) -> Document | Skipped:
    """Parse one page into a Document with sections and links (no chunks yet)."""
    lowered = text[-2000:].lower()
    if "<html" in text[:2000].lower() and "</html>" not in lowered:
        return Skipped(source, "truncated HTML: no closing </html> tag")
    soup = BeautifulSoup(text, "lxml")
    page_title = _SPACE.sub(" ", soup.title.get_text(" ")).strip() if soup.title else ""
    root = _select_first(soup, options.content_selectors)
    if root is None:
        return Skipped(source, "malformed HTML: no content element found")
    for element in _select_all(root, options.remove_selectors):
        if not getattr(element, "decomposed", False):
            element.decompose()
    for element in _select_all(root, options.unwrap_link_selectors):
        if element.parent is not None:
            element.unwrap()

    section_tags = [tag for tag in root.find_all(_is_section) if str(tag.get("id") or "").strip()]
    # Content before the first section (or a page with no sections at all) is a section of its own.
    units: list[tuple[Tag, str, int]] = [(root, "", 0)]
    units += [(tag, str(tag["id"]).strip(), _section_level(tag, root)) for tag in section_tags]

    sections: list[Section] = []
    offset = 0
    for tag, anchor, level in units:
        builder = _TextBuilder()
        anchors: list[str] = []
        raw_links: list[tuple[str, int, int]] = []
        _walk(tag, builder, anchors, raw_links)
        body = builder.text()
        stripped = body.strip()
        if not stripped and anchor == "":
            continue  # no preamble
        lead = len(body) - len(body.lstrip())
        body = stripped
        links = []
        for href, start, end in raw_links:
            link = _make_link(href, start - lead, end - lead, body, page_url, root_url, options)
            if link is not None:
                links.append(link)
        order = len(sections)
        title = _title(tag) if anchor else (page_title if not section_tags else "")
        section_id = f"{doc_id}#{anchor}" if anchor else f"{doc_id}#_s{order}"
        sections.append(Section(
            id=section_id, anchor=anchor, title=title or page_title,
            url=f"{page_url}#{anchor}" if anchor else page_url, order=order, level=level if anchor else 0,
            text=body, start=offset, end=offset + len(body), links=links, anchors=anchors,
        ))
        offset += len(body) + 2  # sections are joined by a blank line in the document text
    if not any(section.text for section in sections):
        return Skipped(source, "no text content")
    title = next((s.title for s in sections if s.anchor and s.title), page_title) or doc_id
    return Document(id=doc_id, title=title, url=page_url, source=source, format="html",
                    content_hash=content_hash, sections=sections)


def _make_link(href: str, start: int, end: int, text: str, page_url: str, root_url: str,
               options: HtmlOptions) -> Link | None:
    href = href.strip()
    if not href or href.startswith(("mailto:", "javascript:", "tel:", "data:")):
        return None
    absolute = urljoin(page_url, href)
    target, fragment = urldefrag(absolute)
    start, end = max(start, 0), max(end, 0)
    return Link(
        target_url=target,
        anchor=fragment,
        text=text[start:end].strip(),
        context=link_context(text, start, end, options.context_words),
        start=start,
        end=end,
        internal=target.startswith(root_url),
    )
