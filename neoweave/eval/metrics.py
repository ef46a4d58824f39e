"""Retrieval and answer metrics, computed per question and averaged by the runner.

Retrieval: a retrieved chunk supports a question when its evidence key (the document title for record
corpora, the section URL for documentation) is among the question's gold evidence.
Answers: SQuAD-style normalisation (lower case, no punctuation or articles, single spaces).
"""

from __future__ import annotations

import re
import string
from collections import Counter

INSUFFICIENT = "insufficient information"
_ARTICLES = re.compile(r"\b(a|an|the)\b")
_NO_PUNCTUATION = str.maketrans("", "", string.punctuation)


def hit(retrieved: list[str], evidence: list[str]) -> float:
    """1 when any gold evidence was retrieved."""
    return float(bool(set(retrieved) & set(evidence)))


def perfect(retrieved: list[str], evidence: list[str]) -> float:
    """1 when all gold evidence was retrieved."""
    return float(bool(evidence) and set(evidence) <= set(retrieved))


def evidence_recall(retrieved: list[str], evidence: list[str]) -> float:
    """Share of the gold evidence retrieved."""
    return len(set(evidence) & set(retrieved)) / len(set(evidence)) if evidence else 0.0


def reciprocal_rank(retrieved: list[str], evidence: list[str]) -> float:
    """1 / rank of the first retrieved item that is gold evidence (0 when none is)."""
    gold = set(evidence)
    for rank, key in enumerate(retrieved, 1):
        if key in gold:
            return 1.0 / rank
    return 0.0


def normalize_answer(text: str) -> str:
    text = text.lower().translate(_NO_PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, golds: list[str]) -> float:
    normalized = normalize_answer(prediction)
    return float(any(normalized == normalize_answer(gold) for gold in golds))


def token_f1(prediction: str, golds: list[str]) -> float:
    """Best token-overlap F1 against any gold answer."""
    best = 0.0
    predicted = normalize_answer(prediction).split()
    for gold in golds:
        reference = normalize_answer(gold).split()
        common = Counter(predicted) & Counter(reference)
        overlap = sum(common.values())
        if not predicted or not reference or overlap == 0:
            best = max(best, float(predicted == reference))
            continue
        precision, recall = overlap / len(predicted), overlap / len(reference)
        best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_in_context(contexts: list[str], golds: list[str], max_words: int = 10) -> float | None:
    """1 when a gold answer occurs, normalised and on word boundaries, in the retrieved text (DPR's top-k
    retrieval accuracy): whether the answer reached the context at all. None when no gold is a short answer
    (yes/no, empty, or longer than `max_words` words, like the FAQ's paragraphs), which no passage spells out."""
    answers = [normalize_answer(gold) for gold in golds]
    answers = [a for a in answers if a and a not in ("yes", "no") and len(a.split()) <= max_words]
    if not answers:
        return None
    text = f" {normalize_answer(' '.join(contexts))} "
    return float(any(f" {answer} " in text for answer in answers))


def is_insufficient(prediction: str) -> float:
    return float(normalize_answer(prediction).startswith(INSUFFICIENT))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in [0, 100]); 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(q / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]
