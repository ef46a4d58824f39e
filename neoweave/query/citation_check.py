"""The citation check: which retrieved passages an answer's citations should name, judged from the text alone.

Asked which passages support its answer, a small model names the first ones more often than the right ones: it
cites a passage that is no evidence beside one that is, and leaves out the passage that holds the answer when
it ranked lower. The check reads the answer, the question and the numbered passages the prompt held (no model
call, no store) and keeps a cited passage that supports the answer or links the question to one that does, adds
such a passage the model did not cite, and drops the rest. Words are compared normalized (case, accents,
possessives and thousands separators folded; stopwords left out).

- **A short answer** (the short-answer prompts) is judged as a chain from the question to the answer. The
  passage that holds it (its content words) comes first, preferring one the question names (its title) or one
  linked to a passage the question names; then, one at a time, a passage linked to the chain (either names the
  other's title) that covers words of the question the chain does not yet cover: the bridge a multi-hop answer
  needs. An answer that adds nothing to the question (yes or no; one of the options the question names) is
  supported by the passages the question names.
- **An answer in sentences** is judged claim by claim, a claim being the sentences (or lines) a citation covers:
  the one it follows and the uncited ones before it ("A. B [1][2]." cites both for A and B; sentences after the
  last citation join the claim before them). A passage supports a sentence when it holds at least half of the
  sentence's content words. A claim keeps the passages it cites that support one of its sentences, and each of
  its sentences that none of those supports cites the passage that supports it best, if one does. A claim of
  sentences with fewer than two content words ("Yes [2].") is no claim to judge: its markers stay.

The model's choice still counts: nothing is checked when it cited nothing (it says no passage supports the
answer), and when the check would leave no citation the model's first one stays. A number that names no
passage the prompt held is left as it is (flagged, not judged).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from neoweave.nlp.names import STOPWORDS, title_variants
from neoweave.nlp.sentences import sentences
from neoweave.query.base import ContextItem
from neoweave.query.citations import cited_numbers, rewrite_markers, strip_markers

_FUNCTION_WORD_TEXT = (
    "also both than into about but if so such then can could would will should may might after before during "
    "while over under between through same other another any all some many much more most yes no first last one "
    "two name named known"
)
_STOP = STOPWORDS | frozenset(_FUNCTION_WORD_TEXT.split())
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_POSSESSIVE = re.compile(r"(?:'|\u2019)s\b")
_WORD = re.compile(r"[a-z0-9]+")
_ENTITIES = {"&quot;": '"', "&amp;": "&", "&#39;": "'"}
HOLDS_SHARE = 0.66
"""Share of a short answer's new content words a passage must hold to hold the answer (both words of a
two-word name, two of three)."""
SENTENCE_SHARE = 0.5
"""Share of a sentence's content words a passage must hold to support it."""
BRIDGE_GAIN = 0.1
"""A passage joins the chain when it covers at least this share of the question's content words (and at least
one) that the chain does not yet cover."""
MAX_CHAIN = 3
"""Passages a short answer's chain holds at most (the answer's and two links)."""
MIN_CLAIM_WORDS = 2
"""A sentence with fewer content words that are words, not numbers ("Yes.", "0.33"), is no claim to judge."""


def _plain(text: str) -> str:
    for entity, char in _ENTITIES.items():
        text = text.replace(entity, char)
    text = unicodedata.normalize("NFKD", text)
    text = "".join(char for char in text if not unicodedata.combining(char)).lower()
    return _THOUSANDS.sub("", _POSSESSIVE.sub("", text))


def words(text: str) -> list[str]:
    """The text's words, normalized: 'Alû's 2,360' -> ['alu', '2360']."""
    return _WORD.findall(_plain(text))


def content_words(text: str) -> list[str]:
    """The words that carry content, each once, in order."""
    return list(dict.fromkeys(word for word in words(text) if word not in _STOP))


def _joined(sequence: list[str]) -> str:
    return f" {' '.join(sequence)} "


class _Passage:
    """One numbered passage as the check reads it: its words, its text for phrase look-ups, and the names its
    title goes by ('Ed Wood (film)': 'ed wood film', 'ed wood')."""

    def __init__(self, item: ContextItem) -> None:
        title = item.section_title or ""
        self.bag = set(words(f"{title} {item.text}"))
        self.text = _joined(words(item.text))
        names = [words(surface) for _key, _rule, surface in title_variants(title)] if title else []
        self.names = [_joined(name) for name in names if any(word not in _STOP for word in name)]

    def mentions(self, other: _Passage) -> bool:
        return any(name in self.text for name in other.names)

    def share(self, terms: list[str]) -> float:
        return sum(term in self.bag for term in terms) / len(terms) if terms else 0.0


def _linked(a: _Passage, b: _Passage) -> bool:
    return a.mentions(b) or b.mentions(a)


@dataclass
class CitationCheck:
    """What the check did to the model's citations (numbers name the prompt's passages from 1)."""

    model: list[int]
    """The numbers as the model gave them."""
    model_answer: str = ""
    """The answer with the model's markers where it put them (after a short answer when they came from the
    follow-up turn)."""
    added: list[int] = field(default_factory=list)
    """Passages the check cites that the model did not."""
    dropped: list[int] = field(default_factory=list)
    """Passages the model cited that the check does not."""
    why: dict[int, str] = field(default_factory=dict)
    """Why each passage the answer now cites is there."""

    def as_dict(self) -> dict[str, Any]:
        return {"model": self.model, "model_answer": self.model_answer, "added": self.added, "dropped": self.dropped,
                "why": {str(number): reason for number, reason in self.why.items()}}


def short_answer_evidence(question: str, answer: str, items: list[ContextItem],
                          cited: list[int]) -> dict[int, str]:
    """The passages (0-based, with why) that carry a short answer from the question: empty when no passage holds
    it."""
    passages = [_Passage(item) for item in items]
    question_words = words(question)
    question_terms = [word for word in dict.fromkeys(question_words) if word not in _STOP]
    spoken = _joined(question_words)
    named = {index for index, passage in enumerate(passages) if any(name in spoken for name in passage.names)}
    cited_indexes = {number - 1 for number in cited}

    def rank(index: int) -> tuple[float, bool, int]:  # more of the question, cited by the model, ranked higher
        return passages[index].share(question_terms), index in cited_indexes, -index

    new_terms = [term for term in content_words(answer) if term not in set(question_terms)]
    if not new_terms:  # yes/no, or an option the question names: its evidence is what the question names
        chosen = {index: "named by the question" for index in named} or {
            max(range(len(passages)), key=rank): "closest to the question"}
    else:
        holders = {index for index, passage in enumerate(passages) if passage.share(new_terms) >= HOLDS_SHARE}
        if not holders:
            return {}
        reached = {holder for holder in holders if any(_linked(passages[holder], passages[index]) for index in named)}
        first = holders & named or {max(reached or holders, key=rank)}
        chosen = dict.fromkeys(first, "holds the answer")
    covered = {term for term in question_terms if any(term in passages[index].bag for index in chosen)}
    needed = max(1.0, BRIDGE_GAIN * len(question_terms))
    while len(chosen) < MAX_CHAIN:
        gains = {index: sum(term in passage.bag for term in question_terms if term not in covered)
                 for index, passage in enumerate(passages) if index not in chosen
                 and (index in named or any(_linked(passage, passages[other]) for other in chosen))}
        if not gains:
            break
        best = max(gains, key=lambda index: (gains[index], rank(index)))
        if gains[best] < needed:
            break
        chosen[best] = "named by the question" if best in named else "links the question to the answer"
        covered |= {term for term in question_terms if term in passages[best].bag}
    return chosen


def _claim_sentences(claim: str) -> list[list[str]]:
    """The content words of each sentence (or line) of a claim that says enough to be judged."""
    found = []
    for line in claim.splitlines():
        for sentence in sentences(line):
            terms = content_words(sentence)
            if sum(any(char.isalpha() for char in term) for term in terms) >= MIN_CLAIM_WORDS:
                found.append(terms)
    return found


def _claim_evidence(claim: str, passages: list[_Passage], cited: list[int]) -> list[int] | None:
    """The numbers a claim (the sentences a citation covers) should cite: the cited passages that hold half the
    content words of one of its sentences, then for each sentence none of those supports, the passage that holds
    the most of it (when it holds half); None when no sentence says enough to be judged."""
    judged = _claim_sentences(claim)
    if not judged:
        return None
    shares = [[passage.share(terms) for passage in passages] for terms in judged]
    chosen = [number for number in cited if any(row[number - 1] >= SENTENCE_SHARE for row in shares)]
    for row in shares:
        if not any(row[number - 1] >= SENTENCE_SHARE for number in chosen):
            best = max(range(len(passages)), key=lambda index: (row[index], -index))
            if row[best] >= SENTENCE_SHARE:
                chosen.append(best + 1)
    return chosen


def check_citations(question: str, cited_text: str, items: list[ContextItem], *,
                    short: bool) -> tuple[str, CitationCheck | None]:
    """`cited_text` (an answer with its [n] markers, numbering `items` from 1) with its markers checked, and what
    the check did; the text unchanged and None when there is nothing to check (no passage, no citation of
    one)."""
    model = cited_numbers(cited_text)
    known = [number for number in model if 1 <= number <= len(items)]
    if not known:
        return cited_text, None
    why: dict[int, str] = {}

    def unknown(numbers: list[int]) -> list[int]:
        return [number for number in numbers if not 1 <= number <= len(items)]

    if short:
        evidence = short_answer_evidence(question, strip_markers(cited_text), items, known)
        why = {index + 1: reason for index, reason in evidence.items()}
        final = [number for number in known if number in why] + sorted(set(why) - set(known))
        text = rewrite_markers(cited_text, lambda _claim, numbers: [*final, *unknown(numbers)], by_claim=False)
    else:
        passages = [_Passage(item) for item in items]

        def judged(claim: str, numbers: list[int]) -> list[int]:
            own = [number for number in numbers if 1 <= number <= len(items)]
            chosen = _claim_evidence(claim, passages, own)
            if chosen is None:  # "Yes [2]." is no claim to judge
                chosen = own
                why.update({number: "cited by the model" for number in own if number not in why})
            else:
                why.update({number: "supports a sentence it is cited for" if number in own else
                            "supports a sentence no cited passage supports" for number in chosen
                            if number not in why})
            return [*chosen, *unknown(numbers)]

        text = rewrite_markers(cited_text, judged)
    if not any(1 <= number <= len(items) for number in cited_numbers(text)):  # never left with none: the model's first
        why = {known[0]: "cited by the model (the check found no other support)"}
        text = rewrite_markers(cited_text, lambda _claim, numbers: [n for n in numbers if n == known[0]]
                               + unknown(numbers), by_claim=False)
    now = [number for number in cited_numbers(text) if 1 <= number <= len(items)]
    return text, CitationCheck(model, cited_text, added=[n for n in now if n not in known],
                               dropped=[n for n in known if n not in now], why={n: why[n] for n in now})
