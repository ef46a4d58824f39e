"""Keyphrase candidates of a text and the normal form of a tag.

The `tags` and `rst` steps rank these candidates into tags and keywords, and KHL-RAG takes a question's
keywords from them at query time; the normal form is how a tag is stored, so a candidate, a machine tag and a
user's tag compare equal.
"""

from __future__ import annotations

import re
import unicodedata

from neoweave.nlp.extraction import ChunkExtraction

MAX_WORDS = 4
MAX_TAG_CHARS = 60
_SPACES = re.compile(r"\s+")
_EDGE_PUNCT = re.compile(r"^[\W_]+|[\W_]+$")


def normalize_tag(tag: str) -> str:
    """A tag as stored: NFKC, lower case, single spaces, no surrounding punctuation ('  Digital  Banking.' ->
    'digital banking')."""
    text = unicodedata.normalize("NFKC", tag).lower()
    return _EDGE_PUNCT.sub("", _SPACES.sub(" ", text).strip())[:MAX_TAG_CHARS].strip()


def candidates(extraction: ChunkExtraction) -> list[str]:
    """Tag candidates of one text: its mentions' names, normalised, 1-4 words with a letter, most frequent first."""
    names: dict[str, int] = {}
    for mention in sorted(extraction.mentions, key=lambda m: -m.count):
        name = normalize_tag(mention.name)
        if name and len(name.split()) <= MAX_WORDS and any(ch.isalpha() for ch in name):
            names[name] = names.get(name, 0) + mention.count
    return list(names)
