"""The seed papers' own measures, per question: precision and document-level hits (Orion), metrics on equal
budgets (the first N chunks, or the chunks that fit N context tokens), and the thesis's short-answer accuracy
with the "Insufficient Information" rule for null questions."""

from __future__ import annotations

from collections.abc import Sequence

from neoweave.eval import metrics
from neoweave.eval.paper_measures import orion_precision_at_k

NULL_TYPES = ("null", "null_query")
"""Question types whose gold answer is that the corpus cannot answer (MultiHop-RAG's null queries)."""


def precision(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """Share of the retrieved items that are gold evidence (precision@k when k items were retrieved)."""
    gold = set(evidence)
    return sum(key in gold for key in retrieved) / len(retrieved) if retrieved else 0.0


def document_key(key: str) -> str:
    """The document an evidence key belongs to: a section URL without its #fragment, a title as is."""
    return key.split("#", 1)[0] if "://" in key else key


def document_hit(retrieved: Sequence[str], evidence: Sequence[str]) -> float:
    """Orion's hit rate with document-level ground truth: any chunk of a gold document counts."""
    return metrics.hit([document_key(k) for k in retrieved], [document_key(k) for k in evidence])


def document_precision(retrieved: Sequence[str], evidence: Sequence[str], k: int | None = None) -> float:
    """Orion's precision@k with document-level ground truth (`paper_measures.orion_precision_at_k`): the first k
    chunks, divided by k (by default the number retrieved; 0 when nothing was)."""
    k = k or len(retrieved)
    return orion_precision_at_k([document_key(key) for key in retrieved],
                                [document_key(key) for key in evidence], k) if k else 0.0


def chunks_within_tokens(token_counts: Sequence[int], budget: int) -> int:
    """How many of the first chunks fit `budget` context tokens together."""
    used = 0
    for count, tokens in enumerate(token_counts):
        used += tokens
        if used > budget:
            return count
    return len(token_counts)


def retrieval_scores(retrieved: Sequence[str], evidence: Sequence[str], k: int | None = None) -> dict[str, float]:
    """Every retrieval measure of one ranked list; `k` is the cut the strategy was asked for (Orion's precision@k
    divides by it: a strategy that returns fewer chunks is not credited for it)."""
    return {"hit": metrics.hit(list(retrieved), list(evidence)),
            "perfect": metrics.perfect(list(retrieved), list(evidence)),
            "recall": metrics.evidence_recall(list(retrieved), list(evidence)),
            "mrr": metrics.reciprocal_rank(list(retrieved), list(evidence)),
            "precision": precision(retrieved, evidence),
            "doc_hit": document_hit(retrieved, evidence),
            "doc_precision": document_precision(retrieved, evidence, k)}


def budget_scores(retrieved: Sequence[str], token_counts: Sequence[int], evidence: Sequence[str], *,
                  chunk_budgets: Sequence[int], token_budgets: Sequence[int]) -> dict[str, dict[str, float]]:
    """The measures on the first N chunks by rank ("chunks:N") and on the chunks that fit N tokens ("tokens:N"):
    strategies that return more context are compared with the others on the same amount."""
    scores = {}
    for n in chunk_budgets:
        scores[f"chunks:{n}"] = {**retrieval_scores(retrieved[:n], evidence, n),
                                 "chunks": float(min(n, len(retrieved)))}
    for budget in token_budgets:
        n = chunks_within_tokens(token_counts, budget)
        scores[f"tokens:{budget}"] = {**retrieval_scores(retrieved[:n], evidence), "chunks": float(n)}
    return scores


def is_null_question(question_type: str, gold: str) -> bool:
    return question_type in NULL_TYPES or metrics.normalize_answer(gold).startswith(metrics.INSUFFICIENT)


def short_answer_accuracy(prediction: str, golds: Sequence[str], question_type: str = "") -> float:
    """The thesis's accuracy: a null question is answered correctly only by "Insufficient Information"; any
    other question when a gold answer appears in the prediction (normalised), and not by declining."""
    if is_null_question(question_type, golds[0] if golds else ""):
        return metrics.is_insufficient(prediction)
    if metrics.is_insufficient(prediction):
        return 0.0
    predicted = f" {metrics.normalize_answer(prediction)} "
    return float(any(gold.strip() and f" {metrics.normalize_answer(gold)} " in predicted for gold in golds))


def citation_scores(cited: Sequence[str], unknown: int, evidence: Sequence[str]) -> dict[str, float]:
    """How an answer's citations match the gold evidence (`cited`: the evidence keys of the items it cites,
    `unknown`: cited numbers that name no item). `cites`: the answer cites anything; `citation_supported`: it
    cites some gold evidence; `citation_recall`: share of the gold evidence cited; `citation_precision` (only
    for answers that cite): share of the cited items, unknown numbers counted, that are gold evidence."""
    gold = set(evidence)
    distinct = list(dict.fromkeys(cited))
    right = sum(key in gold for key in distinct)
    scores = {"cites": float(bool(distinct) or unknown > 0), "citation_supported": float(right > 0),
              "citation_recall": right / len(gold) if gold else 0.0}
    if distinct or unknown:
        scores["citation_precision"] = right / (len(distinct) + unknown)
    return scores


def model_citation_scores(numbers: Sequence[int], keys: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """`citation_precision` and `citation_recall` of cited passage numbers (from 1, into the evidence keys of the
    retrieved items; a number past them counted as unknown), named `model_...`: the model's own citations,
    before the citation check, scored beside the checked ones."""
    known = [number for number in numbers if 1 <= number <= len(keys)]
    scores = citation_scores([keys[number - 1] for number in known], len(numbers) - len(known), evidence)
    return {f"model_{key}": value for key, value in scores.items() if key in ("citation_precision", "citation_recall")}
