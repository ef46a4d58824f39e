"""The report's plot: answer or retrieval quality against context tokens, one line per strategy over k."""

from __future__ import annotations

from pathlib import Path
from typing import Any

# (metric, label) pairs plotted when present: retrieval always, answers when the run answered
_PANELS = (("recall", "evidence recall@k"), ("hit", "hit@k"), ("f1", "answer token F1"),
           ("rouge_l", "answer ROUGE-L"))


def plot_quality_vs_tokens(rows: list[dict[str, Any]], path: Path, *, title: str = "") -> Path | None:
    """Write a PNG with one panel per available quality metric; None when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # files only, no display
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    overall = [r for r in rows if r["type"] == "all" and "context_tokens" in r]
    panels = [(metric, label) for metric, label in _PANELS if any(metric in r for r in overall)]
    if not overall or not panels:
        return None
    figure, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.6), squeeze=False)
    strategies = sorted({r["strategy"] for r in overall})
    for axis, (metric, label) in zip(axes[0], panels, strict=True):
        for name in strategies:
            points = sorted((r["context_tokens"], r[metric], r["k"]) for r in overall
                            if r["strategy"] == name and metric in r)
            if not points:
                continue
            xs, ys, _ = zip(*points, strict=True)
            axis.plot(xs, ys, marker="o", label=name)
            for x, y, k in points:
                axis.annotate(f"k={k}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)
        axis.set_xlabel("context tokens per question (mean)")
        axis.set_ylabel(label)
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
        axis.legend(fontsize=8)
    if title:
        figure.suptitle(title, fontsize=10)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path
