"""Which paragraph pairs the `rst` step asks about (instead of KHL-RAG's every pair).

A paragraph being processed is paired with paragraphs already processed (or earlier in its batch) only, the
paper's incremental extension: its neighbours in reading order within `window`, and its `similar` most similar
paragraphs (in its document; across documents too when enabled). Every pair is asked once, when its second
paragraph is processed; the counts of what an all-pairs run would have asked are kept beside.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Paragraph:
    id: str
    doc_id: str
    order: int
    text: str
    embedding: np.ndarray
    main_idea: str = ""
    title: str = ""


@dataclass
class Pair:
    """Two paragraphs, `earlier` first in reading order (document id, then order); `distance` is how many
    paragraphs apart they are in one document (None across documents)."""

    earlier: Paragraph
    later: Paragraph
    distance: int | None
    similarity: float
    why: str  # "window", "similar" or "window+similar"


@dataclass
class PairCounts:
    asked: int = 0
    all_in_documents: int = 0
    """Pairs an all-pairs run restricted to documents would have asked for the same paragraphs."""
    all_in_corpus: int = 0
    """Pairs the paper's all-pairs run over the corpus would have asked."""
    by_reason: dict[str, int] = field(default_factory=dict)


def _reading_order(a: Paragraph, b: Paragraph) -> tuple[Paragraph, Paragraph]:
    return (a, b) if (a.doc_id, a.order) <= (b.doc_id, b.order) else (b, a)


def candidate_pairs(new: list[Paragraph], done_by_doc: dict[str, list[Paragraph]], *, window: int, similar: int,
                    other_documents: dict[str, list[tuple[Paragraph, float]]] | None = None,
                    done_in_corpus: int = 0, counts: PairCounts | None = None) -> list[Pair]:
    """The pairs to ask about for `new` paragraphs (processed in this order).

    `done_by_doc` holds each document's paragraphs already processed; `other_documents` (cross-document mode)
    each new paragraph's most similar processed paragraphs of other documents with their similarity;
    `done_in_corpus` the count of processed paragraphs (for the all-pairs count).
    """
    counts = counts if counts is not None else PairCounts()
    pool_by_doc = {doc: list(paragraphs) for doc, paragraphs in done_by_doc.items()}
    pairs: list[Pair] = []
    for position, paragraph in enumerate(new):
        same_doc = pool_by_doc.setdefault(paragraph.doc_id, [])
        counts.all_in_documents += len(same_doc)
        counts.all_in_corpus += done_in_corpus + position
        chosen: dict[str, tuple[Paragraph, str]] = {}
        for other in same_doc:
            if abs(other.order - paragraph.order) <= window:
                chosen[other.id] = (other, "window")
        ranked: list[tuple[Paragraph, float]] = [(o, float(o.embedding @ paragraph.embedding)) for o in same_doc]
        if other_documents is not None:
            earlier_in_batch = [o for o in new[:position] if o.doc_id != paragraph.doc_id]
            ranked += [(o, float(o.embedding @ paragraph.embedding)) for o in earlier_in_batch]
            ranked += [(o, s) for o, s in other_documents.get(paragraph.id, []) if o.doc_id != paragraph.doc_id]
        seen: set[str] = set()
        top = []
        for other, _ in sorted(ranked, key=lambda item: -item[1]):
            if other.id not in seen and other.id != paragraph.id:
                seen.add(other.id)
                top.append(other)
        for other in top[:similar]:
            found = chosen.get(other.id)
            chosen[other.id] = (other, "window+similar" if found else "similar")
        for other, why in chosen.values():
            earlier, later = _reading_order(other, paragraph)
            distance = abs(later.order - earlier.order) if earlier.doc_id == later.doc_id else None
            pairs.append(Pair(earlier, later, distance, float(earlier.embedding @ later.embedding), why))
            counts.by_reason[why] = counts.by_reason.get(why, 0) + 1
        counts.asked += len(chosen)
        same_doc.append(paragraph)
    return pairs
