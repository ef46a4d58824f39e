"""Text files in the encoding they were written in.

Users' text comes as UTF-8 (with or without a byte order mark), UTF-16 from Windows editors, and Latin-1 /
Windows-1252 from older tools; a page may declare its charset. The order: a byte order mark, then valid UTF-8
(mislabelled UTF-8 pages are far more common than Latin-1 text that happens to be valid UTF-8), then the charset
the file declares, then Windows-1252 (a superset of Latin-1 for text) when charset-normalizer finds it reads as
clean text, then charset-normalizer's best guess among every code page. Windows-1252 goes first because the
detector alone misreads short Western text (`café crème` as Urdu cp1006, French paragraphs as Central European
cp1250), while text in other scripts (Cyrillic, Greek) reads as a mess of symbols in it and falls through to the
detector. Bytes that no encoding reads as text are a reason to skip, naming the first byte UTF-8 rejects. JSON
is UTF-8 by its specification (RFC 8259): `decode_json` accepts only Unicode encodings.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass

_BOMS: tuple[tuple[bytes, str], ...] = (  # UTF-32 first: its little-endian mark starts with UTF-16's
    (codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF8, "utf-8-sig"),
    (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"),
)
_CLEAN = 0.1
"""The most "chaos" (charset-normalizer's share of implausible characters) a Windows-1252 reading may have to be
taken without asking the detector: accented Latin text and typographic quotes stay well under it."""
_WEB_LATIN = frozenset({"iso8859-1", "ascii"})
"""Declared charsets that browsers read as Windows-1252 (the WHATWG Encoding standard), as the page's author saw
them."""


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str
    """The codec that read it, by Python's name: utf-8, utf-8-sig (UTF-8 with a byte order mark), utf-16-le,
    cp1252, ... (recorded on the Document node)."""


@dataclass(frozen=True)
class Undecodable:
    reason: str


def byte_order_mark(raw: bytes) -> tuple[bytes, str] | None:
    """The Unicode byte order mark `raw` starts with and the codec it names (None: no mark)."""
    for mark, name in _BOMS:
        if raw.startswith(mark):
            return mark, name
    return None


def decode_text(raw: bytes, declared: str | None = None) -> Decoded | Undecodable:
    """`raw` as text: by its byte order mark, as UTF-8, in the `declared` charset, or in the detected one."""
    unicode = _unicode(raw)
    if isinstance(unicode, Decoded):
        return unicode
    if declared:
        try:
            name = codecs.lookup(declared).name
        except LookupError:
            name = None
        if name in _WEB_LATIN:
            name = "cp1252"
        for candidate in (name, "iso8859-1") if name == "cp1252" else (name,):
            if candidate:
                try:
                    return Decoded(raw.decode(candidate), candidate)
                except UnicodeDecodeError:
                    continue
    detected = _detect(raw)
    if detected is not None:
        return detected
    return Undecodable(f"not text in any encoding found: invalid UTF-8 at byte {unicode}, and no declared or "
                       "detected encoding reads it")


def decode_json(raw: bytes) -> Decoded | Undecodable:
    """A JSON file's text: UTF-8 (a byte order mark allowed), or UTF-16/32 with a byte order mark."""
    unicode = _unicode(raw)
    if isinstance(unicode, Decoded):
        return unicode
    guess = decode_text(raw)
    convert = (f"it reads as {guess.encoding}: convert it, e.g. `iconv -f {guess.encoding} -t utf-8`"
               if isinstance(guess, Decoded) else "convert it to UTF-8")
    return Undecodable(f"invalid UTF-8 at byte {unicode} (JSON is read as UTF-8, its standard encoding; {convert})")


def _unicode(raw: bytes) -> Decoded | int:
    """By the byte order mark, else as UTF-8; else the offset of the first byte they reject."""
    marked = byte_order_mark(raw)
    if marked is not None:
        mark, name = marked
        try:
            return Decoded(raw[len(mark):].decode(name.removesuffix("-sig")), name)
        except UnicodeDecodeError as exc:
            return exc.start + len(mark)
    try:
        return Decoded(raw.decode("utf-8"), "utf-8")
    except UnicodeDecodeError as exc:
        return exc.start


def _detect(raw: bytes) -> Decoded | None:
    """Windows-1252 when it reads as clean text, else charset-normalizer's best reading; None when it finds the
    bytes are not text."""
    from charset_normalizer import from_bytes

    best = from_bytes(raw, cp_isolation=["cp1252"], threshold=_CLEAN).best() or from_bytes(raw).best()
    if best is None:
        return None
    name = codecs.lookup(best.encoding).name
    try:
        return Decoded(raw.decode(name), name)
    except UnicodeDecodeError:
        return None
