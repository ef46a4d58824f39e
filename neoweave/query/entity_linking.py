"""Link a question to graph entities without an LLM: its word n-grams looked up by normalised name.

Longer matches win over the words inside them ("Scott Derrickson" over "Scott"); unigrams that are
stopwords never match. Shared by LARAG (entity seeds through home sections) and the kg retriever.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.nlp.names import STOPWORDS, concept_key, normalize
from neoweave.query.ranking import best_first
from neoweave.store.base import GraphStore
from neoweave.store.values import fulltext_terms

_WORD = re.compile("[\\w][\\w.'\u2019+#-]*")
MAX_NGRAM = 6


Run = Callable[[str, dict[str, Any]], list[dict[str, Any]]]


@dataclass
class LinkedEntity:
    id: str
    name: str
    matched: str
    mentions: int
    homes: list[str] = field(default_factory=list)


def question_words(question: str) -> list[str]:
    """The question's words as the n-gram keys count them (word spans index this list)."""
    return [w.rstrip(".'\u2019") for w in _WORD.findall(question)]


def question_keys(question: str) -> dict[str, tuple[int, int]]:
    """normalised n-gram -> its (start, end) word span; concept forms (singular) included."""
    words = question_words(question)
    keys: dict[str, tuple[int, int]] = {}
    for size in range(MAX_NGRAM, 0, -1):
        for start in range(0, len(words) - size + 1):
            text = " ".join(words[start:start + size])
            key = normalize(text)
            if not key or (size == 1 and (key in STOPWORDS or len(key) < 3)):
                continue
            if all(word in STOPWORDS for word in key.split(" ")):
                continue
            for variant in (key, concept_key(key)):
                keys.setdefault(variant, (start, start + size))
    return keys


def link_entities(run: Run, question: str) -> list[LinkedEntity]:
    """Entities named in the question, longest match first; matches inside a longer match are dropped.
    `run(name, params)` sends a named statement (a strategy's traced and timed `_run`)."""
    keys = question_keys(question)
    if not keys:
        return []
    return pick_linked(run("entities_by_keys", {"keys": sorted(keys)}), keys)


def pick_linked(rows: list[dict], keys: dict[str, tuple[int, int]]) -> list[LinkedEntity]:
    """Rows of entities matched by key (`matched`, `id`, `name`, `mentions`, `homes`) -> the linked entities:
    longer spans first, then entities with a home, then rarer ones; a match inside a longer one is dropped."""
    rows = sorted(rows, key=lambda r: (-(keys[r["matched"]][1] - keys[r["matched"]][0]), -len(r["homes"] or []),
                                       r["mentions"], r["id"]))
    taken: list[tuple[int, int]] = []
    linked: list[LinkedEntity] = []
    for row in rows:
        start, end = keys[row["matched"]]
        if any(s <= start and end <= e and (s, e) != (start, end) for s, e in taken):
            continue
        taken.append((start, end))
        linked.append(LinkedEntity(row["id"], row["name"], row["matched"], int(row["mentions"] or 0),
                                   list(row["homes"] or [])))
    return linked


def _is_cased(token: str) -> bool:
    """Written like part of a name: capitalised, or with a digit or code punctuation ("Leland", "U-20", "1986",
    "os.path", "__init__")."""
    return bool(token) and (token[0].isupper() or any(ch.isdigit() or ch in "._#+" for ch in token))


def cased_words(question: str) -> set[str]:
    """Normalised words (not stopwords) the question writes like part of a name (`_is_cased`)."""
    return {word for token in question_words(question) if _is_cased(token) for word in normalize(token).split()
            if word not in STOPWORDS}


def span_is_cased(question: str, span: tuple[int, int]) -> bool:
    """Whether a word span of the question (`question_keys`) has a word written like part of a name: the span,
    not the key, decides ("Beatles" matches the concept key "beatle")."""
    words = question_words(question)
    return any(_is_cased(words[i]) and not (i == 0 and words[i].lower() in STOPWORDS)  # "Who ..." starts a sentence
               for i in range(span[0], span[1]))


def no_entities(strategy: str) -> NeoweaveError:
    """The error of a strategy that needs the entity layer on a graph without one."""
    return NeoweaveError(f"{strategy}: the graph has no entities (the entity index is empty)",
                         hint="run `neoweave enrich kg` first")


def link_question(run: Run, store: GraphStore, question: str, embedding: list[float], *, entity_k: int,
                  min_similarity: float, lowercase_score: float = 1.0, vector_factor: float = 1.0,
                  sibling_factor: float = 1.0, fulltext: bool = True, strategy: str = "entity linking"
                  ) -> dict[str, float]:
    """entity id -> link score: 1.0 for a name in the question (n-gram key, or a full-text hit over names and
    aliases whose words all occur in the question), `lowercase_score` instead when the question writes every
    word of the match in lowercase (common words such as "city" or "series" that some text capitalised), the
    cosine times `vector_factor` for one of the `entity_k` nearest entity vectors at or above `min_similarity`
    (a neighbour of the question's meaning, not a name it writes), times `sibling_factor` too when its name
    shares a word with a name the question writes (1.0 above) but is another entity ("Heinkel HD 26" for a
    question naming "Heinkel HD 23"); a weight of 0 links nothing. One statement
    (`kg_link_entities`) brings all three kinds; without `fulltext`, `kg_link_names` brings names and vectors
    (the full-text branch's cost grows with the number of entity names). No row at all means no entity has a
    vector: the graph has no entity layer, and `strategy` stops with an error naming `enrich kg` rather than
    answer from its dense seeds alone."""
    keys = question_keys(question)
    cased = cased_words(question)

    # stopwords never decide a match below, and as index terms they hit thousands of names
    query = store.fulltext_query(" ".join(term for term in fulltext_terms(question)
                                          if term.lower() not in STOPWORDS))
    if query is None:  # no plain words: only the embedding can link
        rows = run("kg_entity_vector_search", {"k": entity_k, "embedding": embedding}) if entity_k else []
        rows = [{**row, "via": "vector"} for row in rows]
    elif not fulltext:
        rows = run("kg_link_names", {"keys": sorted(keys), "entity_k": max(entity_k, 1), "embedding": embedding})
    else:
        rows = run("kg_link_entities", {"keys": sorted(keys), "query": query, "fulltext_k": 10,
                                        "entity_k": max(entity_k, 1), "embedding": embedding})
    if not rows and (query is not None or entity_k):  # the nearest-vector branch ran and found no entity at all
        raise no_entities(strategy)
    named = pick_linked([r for r in rows if r["via"] == "name"], keys)
    seeds = {entity.id: 1.0 if span_is_cased(question, keys[entity.matched]) else lowercase_score
             for entity in named}
    words = set(normalize(question).split())
    all_words = question_words(question)
    spans = [set(normalize(" ".join(all_words[start:end])).split())
             for start, end in (keys[entity.matched] for entity in named)]
    for hit in (r for r in rows if r["via"] == "fulltext"):
        for name in [hit["name"] or "", *(hit["aliases"] or [])]:
            name_words = normalize(name).split()
            if any(set(name_words) < span for span in spans):  # inside a longer name ("Killers" in "Natural
                break                                         # Born Killers"), dropped as pick_linked drops it
            if name_words and set(name_words) <= words and not set(name_words) <= STOPWORDS:
                seeds.setdefault(hit["id"], 1.0 if set(name_words) & cased else lowercase_score)
                break
    if entity_k:
        named_words = _content_words(row["name"] for row in rows
                                     if row["via"] != "vector" and seeds.get(row["id"]) == 1.0)
        nearest = sorted((r for r in rows if r["via"] == "vector"), key=lambda r: best_first(r["score"], r["id"]))
        for row in nearest[:entity_k]:
            if float(row["score"]) < min_similarity or row["id"] in seeds:
                continue
            sibling = bool(_content_words([row["name"]]) & named_words)
            weight = float(row["score"]) * vector_factor * (sibling_factor if sibling else 1.0)
            if weight > 0:
                seeds[row["id"]] = weight
    return seeds


def _content_words(names: Iterable[str | None]) -> set[str]:
    return {word for name in names for word in normalize(name or "").split() if word not in STOPWORDS}


@dataclass(frozen=True)
class WrittenAs:
    """How the corpus writes a linked entity's name (`written_as`)."""

    name: str
    common_mentions: int | None
    """None for a name; for a common noun, how often the corpus writes it (the most mentions of the entity or
    of its common-noun twin: the word's frequency, for an inverse-frequency weight)."""


def written_as(run: Run, ids: list[str], generic_types: frozenset[str]) -> dict[str, WrittenAs]:
    """Each entity's name, and whether the corpus writes it as a common noun: of a generic type, named without
    a word written like a name ("musician"), or whose key is a generic entity's key mentioned at least as often
    ("Film Director" tagged once as a name, "film director" a concept in ten chunks; "University" beside
    "universities"). A question's seed that is a common noun is no more than a common word of the question."""
    if not ids:
        return {}
    rows = run("entity_written_as", {"ids": sorted(ids), "generic_types": sorted(generic_types)})
    written = {}
    for row in rows:
        name, mentions, common = row["name"] or "", int(row["mentions"] or 0), int(row["common_mentions"] or 0)
        is_common = (row["type"] in generic_types or not any(_is_cased(token) for token in question_words(name))
                     or (common > 0 and common >= mentions))
        written[row["id"]] = WrittenAs(name, max(mentions, common) if is_common else None)
    return written


def comparison_sides(question: str, linked: dict[str, float], written: dict[str, WrittenAs]) -> set[str]:
    """The entities a comparison question names in full: linked as names (score 1), written as names, and not
    a part of a longer name the question writes ("Young" in "the birth of Robert Young" is no side: the
    question names Robert Young, whom the graph may not know by that name)."""
    runs = _cased_runs(question)
    sides = set()
    for entity, score in linked.items():
        if score < 1.0 or entity not in written or written[entity].common_mentions is not None:
            continue
        words = _content_words([written[entity].name])
        if words and not any(words < run for run in runs):
            sides.add(entity)
    return sides


def _cased_runs(question: str) -> list[set[str]]:
    """The content words of each run of consecutive words the question writes like a name (punctuation ends a
    run: "American, Mark King" is two; a first word capitalised only as the sentence's first is none)."""
    runs: list[set[str]] = []
    current: list[str] = []
    previous_end = 0
    for index, match in enumerate(_WORD.finditer(question)):
        word = match.group().rstrip(".'\u2019")
        adjoining = not question[previous_end:match.start()].strip()
        previous_end = match.end()
        if current and not adjoining:
            runs.append(_content_words([" ".join(current)]))
            current = []
        if _is_cased(word) and not (index == 0 and word[1:].islower()):  # "Between ...": a sentence's capital
            current.append(word)
        elif current:
            runs.append(_content_words([" ".join(current)]))
            current = []
    if current:
        runs.append(_content_words([" ".join(current)]))
    return runs
