"""Exact token counts for BERT-style (WordPiece) tokenizers, word by word with a memo.

Counting the ~15 facts kg gives a prompt through the Rust tokenizer cost ~2.5 ms per question, most of it
building encodings (ids, offsets, masks) that a count throws away. A BERT tokenizer splits text on
whitespace and punctuation before WordPiece, and its normalizer works character by character, so a text's
count is the special tokens plus the sum of the counts of its space-separated pieces, and a piece's count
never changes. Printable-ASCII text is split here with one regular expression into the tokenizer's words;
a piece with any other character (accents, CJK, control characters) is counted by the tokenizer, once.
Text that names a special token goes through the tokenizer whole, so every count equals the tokenizer's.
"""

from __future__ import annotations

import re
from collections.abc import Callable

Counter = Callable[[list[str]], list[int]]

_PRINTABLE_ASCII = re.compile(r"[\t\n\r\x20-\x7e]*")
# BERT's pre-tokenizer: runs of letters and digits are words; every other printable ASCII character is
# punctuation (ASCII 33-47, 58-64, 91-96, 123-126) and a word of its own; whitespace separates.
_WORDS = re.compile(r"[A-Za-z0-9]+|[^A-Za-z0-9\s]")
_ASCII_SPACE = re.compile(r"[ \t\n\r]+")
"""Whitespace to the tokenizer and to Python alike (Python also splits on control characters the tokenizer
drops, which would join the words around them)."""
_MEMO_LIMIT = 200_000
"""Distinct words remembered before the memo starts afresh (a server's vocabulary grows without bound)."""
_MEMO_PIECE_CHARS = 64
"""Longer pieces with non-ASCII characters are counted each time, not remembered (at most ~25 MB of memo)."""


def wordpiece_counter(backend, encode_count: Counter) -> Counter | None:
    """A counter for `backend` (a `tokenizers.Tokenizer`) if it is a BERT WordPiece pipeline, else None.

    `encode_count` counts texts through the tokenizer itself; it is used for the texts the fast path does
    not cover."""
    names = (type(backend.normalizer).__name__, type(backend.pre_tokenizer).__name__, type(backend.model).__name__)
    if names != ("BertNormalizer", "BertPreTokenizer", "WordPiece") or backend.post_processor is None:
        return None
    lowercase = bool(backend.normalizer.lowercase)
    special = backend.post_processor.num_special_tokens_to_add(False)
    added = [token.content for token in backend.get_added_tokens_decoder().values()]
    names_special = re.compile("|".join(map(re.escape, added)), re.IGNORECASE) if added else None
    words = _Memo(lambda word: len(backend.model.tokenize(word)))  # a word as the pre-tokenizer leaves it
    pieces = _Memo(lambda piece: len(backend.encode(piece, add_special_tokens=False).ids))  # other characters

    def count_ascii(text: str) -> int:
        return sum(map(words.__getitem__, _WORDS.findall(text.lower() if lowercase else text)))

    def count(texts: list[str]) -> list[int]:
        counts: list[int] = []
        whole: list[int] = []
        long_pieces: list[tuple[int, str]] = []
        for i, text in enumerate(texts):
            if names_special is not None and names_special.search(text):
                whole.append(i)  # a special token written out is one token to the tokenizer
                counts.append(0)
                continue
            if _PRINTABLE_ASCII.fullmatch(text):
                counts.append(special + count_ascii(text))
                continue
            total = special
            for piece in _ASCII_SPACE.split(text):
                if _PRINTABLE_ASCII.fullmatch(piece):
                    total += count_ascii(piece)
                elif len(piece) <= _MEMO_PIECE_CHARS:
                    total += pieces[piece]
                else:  # a long piece (CJK text has no spaces) rarely repeats: counted, not remembered
                    long_pieces.append((i, piece))
            counts.append(total)
        if long_pieces:
            encodings = backend.encode_batch([piece for _, piece in long_pieces], add_special_tokens=False)
            for (i, _), encoding in zip(long_pieces, encodings, strict=True):
                counts[i] += len(encoding.ids)
        if whole:
            for i, n in zip(whole, encode_count([texts[i] for i in whole]), strict=True):
                counts[i] = n
        return counts

    return count


class _Memo(dict):
    """Counts by key, computed on first use (a dict lookup in C for every word seen before)."""

    def __init__(self, count_of: Callable[[str], int]) -> None:
        super().__init__()
        self._count_of = count_of

    def __missing__(self, key: str) -> int:
        if len(self) >= _MEMO_LIMIT:
            self.clear()
        count = self[key] = self._count_of(key)
        return count
