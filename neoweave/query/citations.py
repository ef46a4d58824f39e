"""Citations: the numbered context items an answer says it used, as data.

Every answer prompt numbers its passages `[1]`, `[2]`, ... in the order of the retrieval's items (facts cite
the same numbers), and asks the model to put those numbers in square brackets after what they support. The
reply is read back here: each number becomes a `Citation` to its chunk (section, document, URL; a PDF
section's URL names its page), a number that names no retrieved item is kept and flagged (`known` false: the
model cited something it was not given), and the answer text comes back without the markers, so exact-match
scoring and short answers stay what they were.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from neoweave.query.base import ContextItem

_MARKER = re.compile(
    r"(?:\s+|(?<![\w)]))\[\s*(?:(?:passages?|sources?|context|documents?|docs?|items?)\s*)?#?"
    r"(\d{1,4}(?:\s*(?:,|;|-|\u2013|and)\s*#?\d{1,4})*)\s*\]", re.IGNORECASE)
"""A citation marker: `[2]`, `[1, 3]`, `[2-4]`, `[Passage 2]`, with the whitespace before it; not an index
written against a name (`items[2]`, `f(x)[0]`)."""
_CODE = re.compile(r"```.*?(?:```|$)|`[^`\n]*`", re.DOTALL)
"""Code in an answer (fenced or inline): brackets there are code, not citations."""
_NUMBER_OR_RANGE = re.compile(r"(\d+)\s*(?:(?:-|\u2013)\s*#?(\d+))?")
_MAX_RANGE = 50
"""A range wider than this is not read as a range (`[1-2000]` is no citation of 2,000 passages)."""
_SPACE_BEFORE_PUNCTUATION = re.compile(r"\s+([.,;:!?)])")
_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])|\n\s*")
"""Where one claim of an answer ends and the next begins: after a sentence, or at a line break (a list item)."""
_CLOSING = re.compile(r"[\s.!?:;]*$")
_ENDS_WITH_MARKER = re.compile(_MARKER.pattern + "$", re.IGNORECASE)


@dataclass(frozen=True)
class Citation:
    """One cited context item, by its number in the prompt."""

    number: int
    known: bool
    """False when the number names no item the answer was given (flagged in every front end)."""
    chunk_id: str = ""
    section_id: str = ""
    doc_id: str = ""
    section_title: str = ""
    url: str = ""

    @property
    def source(self) -> str:
        """Where to read it: the section's URL (a web page, a PDF's page), else its title, else the document."""
        if not self.known:
            return "(no such passage was retrieved)"
        return self.url or self.section_title or self.doc_id


def _numbers(group: str) -> list[int]:
    numbers: list[int] = []
    for start, end in _NUMBER_OR_RANGE.findall(group):
        first = int(start)
        last = int(end) if end else first
        if end and first < last <= first + _MAX_RANGE:
            numbers.extend(range(first, last + 1))
        else:
            numbers.extend((first, last) if end else (first,))
    return numbers


def _markers(text: str) -> list[re.Match[str]]:
    code = [match.span() for match in _CODE.finditer(text)]
    return [match for match in _MARKER.finditer(text)
            if not any(start <= match.start(1) < end for start, end in code)]


def cited_numbers(text: str) -> list[int]:
    """Every number cited in `text`, first citation first, each once."""
    seen: dict[int, None] = {}
    for match in _markers(text):
        for number in _numbers(match.group(1)):
            seen.setdefault(number, None)
    return list(seen)


def strip_markers(text: str) -> str:
    """The text without its citation markers ("Paris [2]." -> "Paris.")."""
    parts, end = [], 0
    for match in _markers(text):
        parts.append(text[end:match.start()])
        end = match.end()
    parts.append(text[end:])
    return _SPACE_BEFORE_PUNCTUATION.sub(r"\1", "".join(parts)).strip()


def citations(text: str, items: list[ContextItem]) -> list[Citation]:
    """The citations of an answer against the items it was given (numbered from 1 in their order)."""
    found = []
    for number in cited_numbers(text):
        if 1 <= number <= len(items):
            item = items[number - 1]
            found.append(Citation(number, True, item.chunk_id, item.section_id, item.doc_id, item.section_title,
                                  item.url))
        else:
            found.append(Citation(number, False))
    return found


def _code_spans(text: str) -> list[tuple[int, int]]:
    return [match.span() for match in _CODE.finditer(text)]


def _sentence_starts(text: str, code: list[tuple[int, int]]) -> list[int]:
    """Where each sentence or line of `text` starts (none inside code); markers written after a sentence's full
    stop ("... tasks. [2] Then") belong to the sentence they follow."""
    starts = [0]
    for match in _SENTENCE_BREAK.finditer(text):
        start = match.end()
        if any(begin <= match.start() < end for begin, end in code):
            continue
        while (marker := _MARKER.match(text, start)) is not None:
            start = marker.end()
            start += len(text[start:]) - len(text[start:].lstrip())
        if starts[-1] < start < len(text):
            starts.append(start)
    return starts


def _claim_starts(text: str, code: list[tuple[int, int]], markers: list[re.Match[str]]) -> list[int]:
    """Where each claim of `text` starts: a claim is the sentences up to one that cites (its markers cover the
    uncited sentences before it: "A. B [1][2]." cites both for A and B); sentences after the last citation join
    the claim before them."""
    sentences = _sentence_starts(text, code)
    starts: list[int] = []
    cites = False
    for begin, end in zip(sentences, [*sentences[1:], len(text)], strict=True):
        if not starts or cites:
            starts.append(begin)
        cites = any(begin <= match.start(1) < end for match in markers)
    if len(starts) > 1 and not any(match.start(1) >= starts[-1] for match in markers):
        starts.pop()
    return starts


def rewrite_markers(text: str, judge: Callable[[str, list[int]], list[int]], *, by_claim: bool = True) -> str:
    """`text` with the numbers each claim cites replaced by those `judge(claim, numbers)` returns for it (the
    claim without markers, the numbers it cites first-cited first): a number it leaves out is taken out of its
    marker where the model put it, a new one is written at the claim's end (before its full stop). A claim is
    the sentences (or lines) a citation covers (`by_claim`: `_claim_starts`), else the whole text is one."""
    code = _code_spans(text)
    markers = [match for match in _MARKER.finditer(text) if not any(b <= match.start(1) < e for b, e in code)]
    starts = _claim_starts(text, code, markers) if by_claim else [0]
    parts: list[str] = []
    for begin, end in zip(starts, [*starts[1:], len(text)], strict=True):
        own = [match for match in markers if begin <= match.start(1) < end]
        cited = list(dict.fromkeys(number for match in own for number in _numbers(match.group(1))))
        wanted = judge(strip_markers(text[begin:end]), cited)
        piece, cursor, space = [], begin, ""
        for match in own:
            numbers = _numbers(match.group(1))
            kept = [number for number in numbers if number in wanted]
            between = text[cursor:match.start()]
            whole = match.group(0)
            space = (space if not between else "") or whole[:len(whole) - len(whole.lstrip())]
            piece.append(between)
            if kept:  # "[1][3]" without 1: the space that came before [1] now comes before [3]
                piece.append(space + (whole.lstrip() if kept == numbers else "".join(f"[{n}]" for n in kept)))
                space = ""
            cursor = match.end()
        piece.append(text[cursor:end])
        claim = "".join(piece)
        new = [number for number in wanted if number not in cited]
        if new:
            cut = len(claim) - len(_CLOSING.search(claim).group(0))
            head = claim[:cut]
            markers_text = "".join(f"[{number}]" for number in new)
            claim = head + ("" if _ENDS_WITH_MARKER.search(head) else " ") + markers_text + claim[cut:]
        parts.append(claim)
    return "".join(parts)
