"""The citation check replayed on stored HotpotQA answers, with no model: each record's question, answer and the
model's citation numbers, its retrieved passages rebuilt from the corpus (a passage's evidence key is its title),
checked as `neoweave.query.answer` checks a short answer cited in the follow-up turn; citation precision and
recall before (the model's numbers) and after (the checked ones), per run.

    .venv/bin/python benchmarks/citation_check.py RUN [RUN ...]

RUN is a `neoweave eval --answer --out` directory (records.json) over examples/hotpotqa/qa.jsonl with a short-answer
prompt. A run made with the check keeps the model's own numbers (`model_citations`); an older one's `citations`
are the model's. docs/answers.md has the numbers.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from neoweave.eval.measures import citation_scores
from neoweave.query.base import ContextItem
from neoweave.query.citation_check import check_citations
from neoweave.query.citations import cited_numbers

HOTPOTQA = Path(__file__).resolve().parent.parent / "examples" / "hotpotqa"


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def main() -> None:
    passages: dict[str, dict] = {}
    for record in _lines(HOTPOTQA / "corpus.jsonl"):
        passages.setdefault(record["title"], record)
    evidence = {question["id"]: question["evidence"] for question in _lines(HOTPOTQA / "qa.jsonl")}
    print("| run | answers | citation precision before -> after | citation recall before -> after |")
    print("| --- | --- | --- | --- |")
    for run in sys.argv[1:]:
        scores: dict[str, dict[str, list[float]]] = {"before": {}, "after": {}}
        records = [r for r in json.loads((Path(run) / "records.json").read_text()) if "citations" in r]
        for record in records:
            keys = [item["evidence"] for item in record["retrieved"]]
            items = [ContextItem(passages[key]["text"], item["chunk_id"], passages[key]["id"], passages[key]["id"],
                                 item["score"], item["origin"], section_title=key)
                     for key, item in zip(keys, record["retrieved"], strict=True)]
            model = record.get("model_citations", record["citations"])
            text = f"{record['answer']} " + "".join(f"[{number}]" for number in model)
            after = model if "insufficient information" in record["answer"].lower() else cited_numbers(
                check_citations(record["question"], text, items, short=True)[0])
            for name, numbers in (("before", model), ("after", after)):
                known = [number for number in numbers if 1 <= number <= len(keys)]
                scored = citation_scores([keys[n - 1] for n in known], len(numbers) - len(known),
                                         evidence[record["question_id"]])
                for key, value in scored.items():
                    scores[name].setdefault(key, []).append(value)
        mean = {name: {key: statistics.fmean(values) for key, values in by.items()} for name, by in scores.items()}
        print(f"| {run} | {len(records)} | {mean['before']['citation_precision']:.3f} -> "
              f"{mean['after']['citation_precision']:.3f} | {mean['before']['citation_recall']:.3f} -> "
              f"{mean['after']['citation_recall']:.3f} |")


if __name__ == "__main__":
    main()
