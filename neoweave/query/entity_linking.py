"""Link a question to graph entities without an LLM: its word n-grams looked up by normalised name.

Longer matches win over the words inside them ("Scott Derrickson" over "Scott"); unigrams that are
stopwords never match. Shared by LARAG (entity seeds through home sections) and the kg retriever.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from neoweave.enrich.names import STOPWORDS, concept_key, normalize
from neoweave.store.base import GraphStore

_WORD = re.compile("[\\w][\\w.'\u2019+#-]*")
MAX_NGRAM = 6


@dataclass
class LinkedEntity:
    id: str
    name: str
    matched: str
    mentions: int
    homes: list[str] = field(default_factory=list)


def question_keys(question: str) -> dict[str, tuple[int, int]]:
    """normalised n-gram -> its (start, end) word span; concept forms (singular) included."""
    words = [w.rstrip(".'\u2019") for w in _WORD.findall(question)]
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


def link_entities(store: GraphStore, question: str, statements: list[str] | None = None) -> list[LinkedEntity]:
    """Entities named in the question, longest match first; matches inside a longer match are dropped."""
    keys = question_keys(question)
    if not keys:
        return []
    if statements is not None:
        statements.append("entities_by_keys")
    return pick_linked(store.run("entities_by_keys", {"keys": sorted(keys)}), keys)


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
