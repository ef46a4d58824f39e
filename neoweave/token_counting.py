"""Exact token counts for BERT-style (WordPiece) tokenizers, word by word with a memo.

Counting the ~15 facts kg gives a prompt through the Rust tokenizer cost ~2.5 ms per question, most of it
building encodings (ids, offsets, masks) that a count throws away. A BERT tokenizer splits text on
whitespace and punctuation before WordPiece, so a text's count is the special tokens plus the sum of its
words' counts, and a word's count never changes: printable-ASCII text is split here with one regular
expression and each word's count is looked up. Any other text (accents, CJK, control characters) and text
that names a special token goes through the tokenizer itself, so every count equals the tokenizer's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Counter = Callable[[list[str]], list[int]]

_PRINTABLE_ASCII = re.compile(r"[\t\n\r\x20-\x7e]*")
# BERT's pre-tokenizer: runs of letters and digits are words; every other printable ASCII character is
# punctuation (ASCII 33-47, 58-64, 91-96, 123-126) and a word of its own; whitespace separates.
_WORDS = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")
_MEMO_LIMIT = 200_000
"""Distinct words remembered before the memo starts afresh (a server's vocabulary grows without bound)."""


def wordpiece_counter(backend, encode_count: Counter) -> Counter | None:
    """A counter for `backend` (a `tokenizers.Tokenizer`) if it is a BERT WordPiece pipeline, else None.

    `encode_count` counts texts through the tokenizer itself; it is used for the texts the fast path does
    not cover."""
    names = (type(backend.normalizer).__name__, type(backend.pre_tokenizer).__name__, type(backend.model).__name__)
    if names != ("BertNormalizer", "BertPreTokenizer", "WordPiece") or backend.post_processor is None:
        return None
    lowercase = bool(backend.normalizer.lowercase)
    special = backend.post_processor.num_special_tokens_to_add(False)
    added = [token.content.lower() for token in backend.get_added_tokens_decoder().values()]
    tokenize = backend.model.tokenize
    memo: dict[str, int] = {}

    def count_word(word: str) -> int:
        count = memo.get(word)
        if count is None:
            if len(memo) >= _MEMO_LIMIT:
                memo.clear()
            count = memo[word] = len(tokenize(word))
        return count

    def count(texts: list[str]) -> list[int]:
        counts: list[int] = []
        slow: list[int] = []
        for i, text in enumerate(texts):
            folded = text.lower()
            if not _PRINTABLE_ASCII.fullmatch(text) or any(token in folded for token in added):
                slow.append(i)
                counts.append(0)
                continue
            counts.append(special + sum(count_word(word) for word in _WORDS.findall(folded if lowercase else text)))
        if slow:
            for i, n in zip(slow, encode_count([texts[i] for i in slow]), strict=True):
                counts[i] = n
        return counts

    return count
