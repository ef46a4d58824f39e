"""Small text helpers shared by enrich steps and strategies."""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")


def sentences(text: str) -> list[str]:
    """A text's sentences, split after . ! ? before a capital, digit, quote or bracket (no model: cheap and
    exact, so a sentence can be found again in the text)."""
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]
