"""Link-context windows: a span of text with the words around it.

Loaders record it for authored links and extractors for an entity's first occurrence (an inferred link's
context), so both kinds of link are compared on the same kind of text.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"\S+")


def link_context(text: str, start: int, end: int, words: int) -> str:
    """The link text with the words around it: `words` in all, half before and half after."""
    window = 40 * max(words, 1)  # enough characters for the words; avoids rescanning long sections
    before = _WORD.findall(text[max(0, start - window):start])[-(words // 2):] if words > 1 else []
    after = _WORD.findall(text[end:end + window])[: words - words // 2] if words > 0 else []
    return " ".join([*before, text[start:end].strip(), *after]).strip()
