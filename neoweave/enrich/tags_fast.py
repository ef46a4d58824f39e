"""LLM-free tagging: keyphrases ranked by embedding similarity (KeyBERT's method, with its MMR diversity).

Candidates are the phrases the fast extractor finds (`neoweave/nlp/keyphrases.py`: named entities, proper-noun
and noun phrases, code names, 1-4 words); each is embedded and scored by cosine similarity to what it should
describe: a chunk's stored embedding (paragraph tags) or the mean of a document's leading chunk embeddings (master
tags). Maximal marginal relevance then picks tags that are close to the text but not to each other (no 'film
director' next to 'director').
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.keyphrases import candidates, normalize_tag
from neoweave.protocols import TextEmbedder


@dataclass
class Scored:
    name: str
    weight: float


def mmr(target: np.ndarray, phrases: Sequence[str], vectors: np.ndarray, top: int, diversity: float
        ) -> list[Scored]:
    """Maximal marginal relevance: repeatedly take the phrase maximising (1 - diversity) * sim(phrase, target)
    - diversity * max sim(phrase, taken). Weights are the phrases' similarity to the target."""
    if not len(phrases) or top < 1:
        return []
    relevance = vectors @ target
    between = vectors @ vectors.T
    chosen: list[int] = [int(np.argmax(relevance))]
    while len(chosen) < min(top, len(phrases)):
        rest = [i for i in range(len(phrases)) if i not in chosen]
        redundancy = between[np.ix_(rest, chosen)].max(axis=1)
        score = (1 - diversity) * relevance[rest] - diversity * redundancy
        chosen.append(rest[int(np.argmax(score))])
    return [Scored(phrases[i], round(float(relevance[i]), 4)) for i in chosen]


@dataclass
class KeyphraseTagger:
    """Tags for texts against target vectors. Keeps each text's candidates (by key: a chunk id) and each
    phrase's vector for its life, so a chunk read for its document's master tags is not parsed again for its
    own tags, and a phrase met in many chunks is embedded once (half the step's time on HotpotQA)."""

    extractor: FastExtractor
    embedder: TextEmbedder
    diversity: float = 0.3
    max_candidates: int = 24
    """Most frequent candidates kept per text (ranking more costs embeddings, rarely changes the top)."""
    max_cached: int = 200_000
    _candidates: dict[str, list[str]] = field(default_factory=dict, init=False, repr=False)
    _vectors: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def candidates(self, texts: dict[str, str]) -> dict[str, list[str]]:
        """Candidates of each keyed text (parsed once per key)."""
        todo = [(key, text) for key, text in texts.items() if key not in self._candidates]
        if len(self._candidates) + len(todo) > self.max_cached:
            self._candidates.clear()
        for extraction in self.extractor.extract(todo):
            self._candidates[extraction.chunk_id] = candidates(extraction)[:self.max_candidates]
        return {key: self._candidates[key] for key in texts}

    def vectors(self, phrases: list[str]) -> dict[str, np.ndarray]:
        todo = sorted({p for p in phrases if p not in self._vectors})
        if len(self._vectors) + len(todo) > self.max_cached:
            self._vectors.clear()
            todo = sorted(set(phrases))
        if todo:
            self._vectors.update(zip(todo, np.asarray(self.embedder.embed(todo), dtype=np.float32), strict=True))
        return {p: self._vectors[p] for p in phrases}

    def rank(self, per_text: list[list[str]], targets: list[np.ndarray], top: int, *,
             lead: list[str | None] | None = None) -> list[list[Scored]]:
        """Up to `top` tags per candidate list, each ranked against its target vector; `lead` puts a given tag
        first (a document's title as its first master tag)."""
        firsts = [normalize_tag(t or "") for t in lead] if lead else [""] * len(per_text)
        vectors = self.vectors([p for names in per_text for p in names] + [f for f in firsts if f])
        results = []
        for names, target, first in zip(per_text, targets, firsts, strict=True):
            names = [n for n in dict.fromkeys(names) if n != first]
            picked = mmr(target, names, np.asarray([vectors[n] for n in names]), top - (1 if first else 0),
                         self.diversity) if names else []
            if first:
                picked.insert(0, Scored(first, round(float(vectors[first] @ target), 4)))
            results.append(picked)
        return results


def unit(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """The normalised mean of vectors (a document's direction from its chunk embeddings)."""
    mean = np.asarray(vectors, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm else mean
