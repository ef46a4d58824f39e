"""The seed papers' measures with their own formulas, where a paper defines one lexically or by counting (the
equation or line is cited per function, in `../shared/seeds/`). LLM-judged measures keep RAGAS's names and live
in `neoweave.eval.judge`; these never call a model.

Where a paper leaves a detail open the choice is stated here once:
- Tokens (KHL-RAG, eq. 12-17, "the set of tokens"): the text lower-cased, punctuation removed, split on white
  space, as a set (articles are kept: the paper removes nothing; a repeated word counts once).
- Reference (KHL-RAG): the question's gold answer, not its aliases (the paper has one reference per question).
"""

from __future__ import annotations

import string
from collections.abc import Sequence

_NO_PUNCTUATION = str.maketrans({char: " " for char in string.punctuation})

KHL_ALPHA = 0.5
"""KHL-RAG's weight of A-Sim in A-Corr (eq. 14, "defaults to 0.5")."""


def token_set(text: str) -> set[str]:
    """KHL-RAG's "set of tokens" of a text (see the module docstring)."""
    return set((text or "").lower().translate(_NO_PUNCTUATION).split())


def _share(part: set[str], whole: set[str]) -> float:
    """|part & whole| / |whole|, 0 when `whole` is empty ("defined to be 0 when the denominator ... equals zero")."""
    return len(part & whole) / len(whole) if whole else 0.0


def khl_context_recall(prediction: str, reference: str) -> float:
    """KHL-RAG's C-Rec of one answer (003, eq. 12): the share of the reference answer's tokens that the predicted
    answer contains. Despite its name it reads no context: it is the answer's token recall."""
    return _share(token_set(prediction), token_set(reference))


def khl_token_f1(prediction: str, reference: str) -> float:
    """KHL-RAG's F1 (eq. 15-16): harmonic mean of token-set recall and precision of the prediction against the
    reference; 0 when either is 0."""
    predicted, gold = token_set(prediction), token_set(reference)
    recall, precision = _share(predicted, gold), _share(gold, predicted)
    return 2 * recall * precision / (recall + precision) if recall + precision else 0.0


def khl_answer_correctness(similarity: float, prediction: str, reference: str, alpha: float = KHL_ALPHA) -> float:
    """KHL-RAG's A-Corr of one answer (eq. 14): alpha * A-Sim + (1 - alpha) * F1, where A-Sim (eq. 13) is the
    cosine of the two answers' embeddings (`neoweave.eval.similarity.answer_similarity`)."""
    if not 0 <= alpha <= 1:
        raise ValueError(f"alpha must be in [0, 1], got {alpha}")
    similarity = min(1.0, similarity)  # a cosine; float rounding of unit vectors can pass 1 by 1e-7
    return alpha * similarity + (1 - alpha) * khl_token_f1(prediction, reference)


def khl_answer_relevance(prediction: str, question: str) -> float:
    """KHL-RAG's A-Rel of one answer (eq. 17): the share of the question's tokens that the answer contains."""
    return _share(token_set(prediction), token_set(question))


def khl_scores(prediction: str, reference: str, question: str, similarity: float) -> dict[str, float]:
    """The four KHL-RAG measures of one answer, keyed as records and reports store them (A-Sim is the record's
    `answer_similarity`)."""
    return {"khl_c_rec": khl_context_recall(prediction, reference),
            "khl_a_corr": khl_answer_correctness(similarity, prediction, reference),
            "khl_a_rel": khl_answer_relevance(prediction, question)}


def orion_precision_at_k(retrieved_documents: Sequence[str], gold_documents: Sequence[str], k: int) -> float:
    """Orion-RAG's precision@k (002, l. 188): |Retrieved_k & G_q| / k, where Retrieved_k is the first k chunks and
    G_q every chunk of the question's source documents: each of the first k chunks from a gold document counts,
    and the division is by k even when fewer came back."""
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")
    gold = set(gold_documents)
    return sum(document in gold for document in retrieved_documents[:k]) / k


def sentence_share(relevant: int, sentences: int) -> float:
    """PankRAG's context recall (004, eq. 8): |S_ext| / |c(q)|, the share of the context's sentences that are
    relevant to the question (the judge picks S_ext; `neoweave.eval.judge.Judge.context_relevancy`)."""
    if relevant < 0 or sentences < 0 or relevant > sentences:
        raise ValueError(f"relevant sentences must be between 0 and {sentences}, got {relevant}")
    return relevant / sentences if sentences else 0.0
