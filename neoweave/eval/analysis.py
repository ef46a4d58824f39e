"""Statistics over per-question records: correlations (LARAG's F1 against lengths, tokens and time), quantile
bins, and paired bootstrap confidence intervals (run-to-run comparison)."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence


def pearson(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Pearson's r; None when either side is constant or there are fewer than 3 pairs."""
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} x values but {len(ys)} y values")
    if len(xs) < 3:
        return None
    mean_x, mean_y = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mean_x) ** 2 for x in xs)
    syy = sum((y - mean_y) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / math.sqrt(sxx * syy)


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    result = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for position in range(start, end + 1):
            result[order[position]] = (start + end) / 2 + 1
        start = end + 1
    return result


def spearman(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Spearman's rho: Pearson's r of the ranks."""
    return pearson(ranks(xs), ranks(ys)) if len(xs) == len(ys) else pearson(xs, ys)


def quantile_bins(keys: Sequence[float], values: Sequence[float], bins: int = 4) -> list[dict[str, float]]:
    """`values` averaged within `bins` equal-count bins of `keys` (sorted by key): LARAG's F1 by reference
    length quartile. Each bin: its key range, size and mean value."""
    if len(keys) != len(values):
        raise ValueError(f"{len(keys)} keys but {len(values)} values")
    pairs = sorted(zip(keys, values, strict=True))
    if not pairs:
        return []
    bins = max(1, min(bins, len(pairs)))
    result = []
    for index in range(bins):
        part = pairs[index * len(pairs) // bins:(index + 1) * len(pairs) // bins]
        result.append({"bin": index + 1, "low": part[0][0], "high": part[-1][0], "n": len(part),
                       "mean": statistics.fmean(v for _, v in part)})
    return result


def bootstrap_ci(differences: Sequence[float], *, iterations: int = 2000, confidence: float = 0.95,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of paired differences (questions resampled with replacement;
    seeded, so a report is reproducible)."""
    if not differences:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(differences)
    means = sorted(statistics.fmean(rng.choices(differences, k=n)) for _ in range(iterations))
    tail = (1 - confidence) / 2
    low = means[max(0, math.floor(tail * iterations))]
    high = means[min(iterations - 1, math.ceil((1 - tail) * iterations) - 1)]
    return (low, high)


_COST_KEYS = ("total_tokens", "ms")


def _from_cache(record: dict) -> bool:
    """Whether any LLM call of the question came from the cache (records before `llm_cached_calls` was counted
    say so of the answer call only)."""
    return bool(record.get("llm_cached_calls", record.get("answer_cached")))


def answer_analysis(records: Sequence[dict], *, bins: int = 4) -> list[dict]:
    """LARAG's analysis of answer quality, per (strategy, k): Pearson and Spearman correlation of F1 with the
    reference's and the prediction's length (words), the total tokens (prompt + output, 000 l. 296), the context
    tokens and the time per question, and F1 by equal-count bins of reference length. F1 is BERTScore F1 as in the
    paper (000 l. 306) when every answer of the group has it, else token F1; `measure` names which. Total tokens
    and time are correlated over the questions whose LLM calls all ran (`questions_live`): a call from the LLM
    cache costs no tokens and a few milliseconds, which says nothing of the question."""
    groups: dict[tuple[str, int], list[dict]] = {}
    for record in records:
        if "f1" in record:
            groups.setdefault((record["strategy"], record["k"]), []).append(record)
    rows = []
    for (name, k), group in sorted(groups.items()):
        measure = "bertscore" if all("bertscore" in r for r in group) else "f1"
        f1 = [float(r[measure]) for r in group]
        against = {"reference_length": [float(len(str(r.get("gold", "")).split())) for r in group],
                   "prediction_length": [float(len(str(r.get("answer", "")).split())) for r in group],
                   "total_tokens": [float(r.get("prompt_tokens", 0) + r.get("completion_tokens", 0))
                                    for r in group],
                   "context_tokens": [float(r.get("context_tokens", 0)) for r in group],
                   "ms": [float(r.get("total_ms", 0.0)) for r in group]}
        live = [i for i, r in enumerate(group) if not _from_cache(r)]
        row: dict = {"strategy": name, "k": k, "questions": len(group), "questions_live": len(live),
                     "measure": measure}
        for key, values in against.items():
            xs, ys = (values, f1) if key not in _COST_KEYS else ([values[i] for i in live], [f1[i] for i in live])
            row[f"pearson_{key}"] = pearson(xs, ys)
            row[f"spearman_{key}"] = spearman(xs, ys)
        row["f1_by_reference_length"] = quantile_bins(against["reference_length"], f1, bins)
        rows.append(row)
    return rows


_BUDGET_FIELDS = ("hit", "perfect", "recall", "mrr", "precision", "doc_hit", "doc_precision", "chunks")


def summarize_budgets(records: Sequence[dict]) -> list[dict]:
    """Retrieval measures on equal budgets over all questions: per (strategy, k, budget), where a budget is the
    first N chunks by rank ("chunks:N") or the chunks that fit N context tokens ("tokens:N")."""
    groups: dict[tuple[str, int, str], list[dict]] = {}
    for record in records:
        for budget, scores in record.get("budgets", {}).items():
            groups.setdefault((record["strategy"], record["k"], budget), []).append(scores)
    rows = []
    for (name, k, budget), group in groups.items():
        kind, _, size = budget.partition(":")
        row: dict = {"budget": budget, "kind": kind, "size": int(size), "strategy": name, "k": k,
                     "questions": len(group)}
        row.update({key: statistics.fmean(g[key] for g in group) for key in _BUDGET_FIELDS})
        rows.append(row)
    return sorted(rows, key=lambda r: (r["kind"], r["size"], r["strategy"], r["k"]))
