"""The rows of docs/strategies/profiles.md's answer tables, from `neoweave eval --answer` reports (one per profile).

    .venv/bin/python benchmarks/profile_rows.py OUT/faq-pank-paper-merged OUT/faq-pank-neoweave-merged

One Markdown row per report (its first strategy and k): retrieval, answers in the measures the tables use
(BERTScore F1 on MiniLM without rescaling, token F1, KHL-RAG's A-Corr), context and LLM cost a question, and the
latency over its records (p50 and the slowest, uncached and cached alike).
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

HEADER = ("| profile | questions | hit / perfect / recall | answer in context | BERTScore F1 / token F1 / A-Corr "
          "| context chunks / tokens | LLM calls / tokens a question | p50 / max s |\n"
          "| --- | --- | --- | --- | --- | --- | --- | --- |")


def row(report: Path) -> str:
    """One table row from a report directory's summary.json and records.json."""
    summary = json.loads((report / "summary.json").read_text())
    first = next(r for r in summary["rows"] if r["type"] == "all")
    records = [r for r in json.loads((report / "records.json").read_text())
               if r["strategy"] == first["strategy"] and r["k"] == first["k"]]
    seconds = [r["total_ms"] / 1000 for r in records]

    def value(name: str, digits: int = 3) -> str:
        return "-" if first.get(name) is None else f"{first[name]:.{digits}f}"

    return (f"| {first.get('profile', '?')} | {first['questions']} | {value('hit', 2)} / {value('perfect', 2)} / "
            f"{value('recall', 2)} | {value('answer_in_context', 2)} | {value('bertscore')} / {value('f1')} / "
            f"{value('khl_a_corr')} | {first['chunks']:.1f} / {first['context_tokens']:,.0f} | "
            f"{first['llm_calls']:.1f} / {first['llm_tokens']:,.0f} | "
            f"{statistics.median(seconds):.0f} / {max(seconds):.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="+", type=Path, help="report directories of `neoweave eval --answer`")
    args = parser.parse_args()
    print(HEADER)
    for report in args.reports:
        print(row(report))


if __name__ == "__main__":
    main()
