"""Title mentions: a chunk that names a document or section title mentions the entity that title is about.

The small spaCy model misses many names (on HotpotQA only 587 of 994 article titles became an entity's
home from NER spans alone), and an LLM extractor misses some too. The corpus's own titles are a gazetteer
that costs nothing: every title (and its looser readings, `names.title_variants`) that would give an entity
a home is looked for in the chunk text, case-sensitively, longest match first. A match the chunk's
extraction already covered (same normalised name) adds nothing; a new one becomes a `name` entity mention,
which resolution merges with a typed entity of the same name, and homes turn into inferred links.

Incremental, with the result a scan of every chunk against the titles there are now would give: a chunk is
scanned once against all titles (`Chunk.titles_scanned`; re-extraction resets it); titles of sections added later
(`Section.titles_scanned` unset, re-ingest clears it) are looked for in the chunks scanned before them, and where
one would change what the chunk's scan found (a longer title over a shorter one's match) the chunk is extracted
and scanned again; the chunks holding mentions of titles that left the corpus (or name other sections now) are
extracted and scanned again too (`chunks_naming_changed_titles`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache

from tqdm import tqdm

from neoweave.enrich import resolution
from neoweave.enrich.base import TITLE_SCAN_CHUNKS_PER_UNIT, EnrichReport
from neoweave.enrich.homes import TitleIndex, homes_for
from neoweave.enrich.kg_writes import queue_writes
from neoweave.nlp.extraction import ChunkExtraction, Mention, redirect
from neoweave.nlp.link_context import link_context
from neoweave.nlp.names import TYPE_GROUPS, entity_key, normalize
from neoweave.store.base import GraphStore
from neoweave.store.values import now_iso

_TOKEN = re.compile("[\\w][\\w'\u2019+#-]*(?:\\.\\w[\\w'\u2019+#-]*)*")
_POSSESSIVE_END = re.compile("(?:'s|\u2019s|'|\u2019)$")
_ARTICLE = re.compile(r"^(?:The|A|An) ")
_ARTICLES = frozenset({"the", "a", "an"})
_SENTENCE_END = frozenset(".!?:\n")
MAX_WORDS = 10
MAX_ANCHORS = 64
"""Up to this many anchor words (`Gazetteer.anchors`), a text is searched for them before it is tokenized."""


@lru_cache(maxsize=200_000)
def _word_key(word: str) -> str:
    return normalize(word)


def _specific_single_word(surface: str) -> bool:
    """A one-word title worth matching: capitalised ('Tasks', then only mid-sentence) or with a digit or an
    underscore. Lowercase words are too ambiguous: module pages are titled 'string', 'time', 'array'."""
    return (len(surface) >= 3 and surface[0].isupper()) or any(ch.isdigit() or ch == "_" for ch in surface)


@dataclass
class Gazetteer:
    """Title surfaces by normalised name, with the first words they can start with."""

    surfaces: dict[str, frozenset[str]]
    first_words: dict[str, int]  # normalised first word -> the longest title (in words) starting with it
    anchors: frozenset[str] | None = None
    """With few titles (older chunks scanned for a few new ones): the longest word of each surface after its
    article. A match is a surface as written (whitespace aside, an article's first letter aside), so a text
    holding none of them holds no match, and `find` skips it without tokenizing it (2.3 of the 4.1 s a scan of
    the Python docs' 13k chunks for three new titles took)."""

    @classmethod
    def from_index(cls, index: TitleIndex, keys: Iterable[str] | None = None) -> Gazetteer:
        """Titles that would give an entity a home (generic ones, like 'Examples', never do)."""
        surfaces: dict[str, frozenset[str]] = {}
        first_words: dict[str, int] = {}
        for key in (index.surfaces if keys is None else keys):
            texts = {s for s in index.surfaces.get(key, ()) if " " in s or _specific_single_word(s)}
            if not texts or not homes_for([key], index)[0]:
                continue
            surfaces[key] = frozenset(texts | {t.rstrip(".") for t in texts})  # the scan strips a final dot
            size = min(len(key.split(" ")), MAX_WORDS) + 2  # normalising can merge words
            # the scan starts at a text token: "M. Ward" starts at the token "M", its key "m. ward" at "m."; a
            # title after its article is found from the word after it ("the Beatles" as "Beatles", named so)
            firsts = {key.split(" ")[0]} | {_word_key(m.group()) for m in map(_TOKEN.search, texts)
                                            if m and m.group().lower() not in _ARTICLES}
            for first in firsts:
                first_words[first] = max(first_words.get(first, 0), size)
        anchors = {_anchor(text) for texts in surfaces.values() for text in texts}
        return cls(surfaces, first_words,
                   frozenset(anchors) if len(anchors) <= MAX_ANCHORS and "" not in anchors else None)

    def __len__(self) -> int:
        return len(self.surfaces)

    def find(self, text: str, known_keys: set[str] = frozenset()) -> list[Mention]:
        """Title mentions in `text` (longest first, not overlapping), skipping names already in `known_keys`."""
        if self.anchors is not None and not any(anchor in text for anchor in self.anchors):
            return []
        tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(text)]
        mentions: dict[str, Mention] = {}
        i = 0
        while i < len(tokens):
            longest = self.first_words.get(_word_key(text[tokens[i][0]:tokens[i][1]]), 0)
            matched = 0
            for size in range(min(longest, len(tokens) - i), 0, -1):
                start, end = tokens[i][0], tokens[i + size - 1][1]
                surface = _POSSESSIVE_END.sub("", text[start:end].rstrip(".")).rstrip(".")
                key = normalize(surface)
                if key not in self.surfaces or not self._case_matches(surface, self.surfaces[key]):
                    continue
                if size == 1 and self._sentence_initial(text, start) and not _inner_capital(surface):
                    continue  # 'Tasks are ...' at a sentence start says nothing
                matched = size
                if key not in known_keys and key not in mentions:
                    mention = Mention.of(surface, "name", context=link_context(text, start, start + len(surface), 12),
                                         description=link_context(text, start, start + len(surface), 30))
                    if mention is not None:
                        mentions[key] = mention
                elif key in mentions:
                    mentions[key].count += 1
                break
            i += matched or 1
        return list(mentions.values())

    @staticmethod
    def _case_matches(surface: str, titles: frozenset[str]) -> bool:
        """Exactly a title's text, without its leading 'The', or with its article in lower case ('the Beatles')."""
        surface = " ".join(surface.split())
        if surface in titles or any(_ARTICLE.sub("", t) == surface for t in titles if t.startswith("The ")):
            return True
        return any(_ARTICLE.match(t) and surface[:1].lower() == t[:1].lower() and surface[1:] == t[1:]
                   for t in titles)

    @staticmethod
    def _sentence_initial(text: str, start: int) -> bool:
        before = text[:start].rstrip()
        return not before or before[-1] in _SENTENCE_END


def _anchor(surface: str) -> str:
    """The longest word of a title surface after a leading article ('' when it has no other word)."""
    words = surface.split()
    if words and words[0] in ("The", "A", "An"):
        words = words[1:]
    return max(words, key=len) if words else ""


def _inner_capital(word: str) -> bool:
    return any(ch.isupper() or ch.isdigit() for ch in word[1:])


TITLE_SOURCE_SUFFIX = ":titles"
"""The end of the source a title mention's form is written with (`{prefix}{version}:titles`)."""


def title_forms(row: dict) -> dict[str, int]:
    """The forms the title scan wrote on a chunk (key -> count), from parallel origin/source/count lists."""
    forms: dict[str, int] = {}
    for origin, source, count in zip(row["origin_ids"] or [], row["sources"] or [], row["counts"] or [], strict=True):
        if origin and ":" in origin and source and source.endswith(TITLE_SOURCE_SUFFIX):
            forms[origin.split(":", 1)[1]] = int(count or 0)
    return forms


def chunks_naming_changed_titles(store: GraphStore, index: TitleIndex, earlier: dict[str, str] | None, *,
                                 enabled: bool = True) -> list[str]:
    """The chunks whose title scan may differ from one with today's titles: those naming (by a title mention or
    an extracted form: a known name hides a shorter title's match under it) a title whose sections changed since
    the digests `earlier` (`TitleIndex.digests`: a deleted or retitled page's), or, without them, those holding a
    mention of a title that is no longer one (every title mention read; all of them when title mentions are off)."""
    if earlier is not None:
        now = index.digests()
        groups = sorted(set(TYPE_GROUPS.values()))
        origins = sorted({f"{group}:{entity_key(key, group)}" for key, digest in earlier.items()
                          if now.get(key) != digest for group in groups})
        if not origins:
            return []
        holders = sorted(set(origins) | set(resolution.final_survivors(store, origins).values()))
        return sorted({row["chunk_id"] for start in range(0, len(holders), 500)
                       for row in store.run("kg_title_mention_chunks_of",
                                            {"origin_ids": origins, "entity_ids": holders[start:start + 500]})})
    titles = set(Gazetteer.from_index(index).surfaces) if enabled else set()
    return [row["chunk_id"] for row in store.run("kg_title_mention_origins")
            if any(origin.split(":", 1)[-1] not in titles for origin in row["origin_ids"] or [])]


def update_title_mentions(store: GraphStore, report: EnrichReport, index: TitleIndex, *, prefix: str,
                          source: str, batch: int = TITLE_SCAN_CHUNKS_PER_UNIT, progress: bool = True,
                          scan_again: Callable[[list[str]], None] | None = None) -> None:
    """Scan new chunks for every title and older chunks for new titles; write the mentions found. An older chunk
    where a new title would change what a scan with every title finds goes to `scan_again` (extract it again,
    which makes it a new chunk for the scan), or, without it, gets the new title's mentions added."""
    everything = Gazetteer.from_index(index)
    if index.new_keys:  # every title new (a first run): the same gazetteer, not built twice
        new_titles = everything if index.new_keys >= index.surfaces.keys() else Gazetteer.from_index(index,
                                                                                                     index.new_keys)
        if new_titles:
            again = _scan(store, report, new_titles, scanned=True, prefix=prefix, source=source, batch=batch,
                          progress=progress, everything=everything if scan_again is not None else None)
            if again and scan_again is not None:
                report.count("chunks_title_scanned_again", len(again))
                scan_again(again)
    _scan(store, report, everything, scanned=False, prefix=prefix, source=source, batch=batch, progress=progress)
    for start in range(0, len(index.unscanned_sections), store.batch_size):
        store.run("kg_mark_sections_titles_scanned",
                  {"section_ids": index.unscanned_sections[start:start + store.batch_size]}, write=True)


def _scan(store: GraphStore, report: EnrichReport, gazetteer: Gazetteer, *, scanned: bool, prefix: str,
          source: str, batch: int, progress: bool, everything: Gazetteer | None = None) -> list[str]:
    """One pass over the kg-extracted chunks with this scan state; one write unit per page. Chunks scanned before
    (for a few new titles) come only when their text holds an anchor word: the others hold no match, and reading
    them was most of a one-document `enrich kg` on a large graph (17 s of 35 at 111k chunks). With `everything`
    (every title), the older chunks whose new matches do not add up to what a scan with every title finds are
    returned instead of written."""
    anchors = sorted(gazetteer.anchors) if scanned and gazetteer.anchors is not None else None
    total = int(store.run("kg_title_scan_count", {"scanned": scanned, "prefix": prefix, "anchors": anchors}
                          )[0]["chunks"] or 0) if progress else None
    bar = tqdm(total=total, desc="title mentions" + (" (new titles)" if scanned else ""), unit="chunk",
               disable=not progress)
    after, now = store.node_page_start, now_iso()
    differing: list[str] = []
    while True:
        rows = store.run("kg_title_scan_chunks", {"scanned": scanned, "prefix": prefix, "after": after,
                                                  "limit": batch, "anchors": anchors})
        if not rows:
            break
        after = rows[-1]["cursor"]
        found: list[ChunkExtraction] = []
        for row in rows:
            known = {origin.split(":", 1)[1] for origin in row["origin_ids"] or [] if origin and ":" in origin}
            mentions = gazetteer.find(row["text"] or "", known) if gazetteer else []
            if everything is not None:  # a new title can also hide an older one's match (a longer name over it)
                held = title_forms(row)
                whole = everything.find(row["text"] or "", known - held.keys())
                if {m.key: m.count for m in whole} != {**held, **{m.key: m.count for m in mentions}}:
                    differing.append(row["id"])
                    continue
            if mentions:
                found.append(ChunkExtraction(row["id"], "fast", mentions))
        redirect(found, resolution.final_survivors(store, sorted({m.id for r in found for m in r.mentions})))
        with store.unit() as unit:
            count, _ = queue_writes(unit, found, source=source, now=now)
            if not scanned:
                unit.run("kg_mark_chunks_titles_scanned", {"chunk_ids": [row["id"] for row in rows], "scanned": True})
                report.count("chunks_title_scanned", len(rows))
            unit.run("kg_mark_sections_pending", {"chunk_ids": [result.chunk_id for result in found]})
        report.count("title_mentions", count)
        bar.update(len(rows))
    bar.close()
    return differing
