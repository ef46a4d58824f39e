"""LLM entity extraction: wall time, tokens, entities and relations per chunk, and the failure rate.

    python benchmarks/extract_llm.py --models qwen2.5-coder-0.5b,qwen2.5-coder-1.5b --limit 40 \
        [--grammar both|on|off] [--out docs/benchmarks/extract_llm.json]

Runs the `kg` step's LLM extractor (the very prompt and schema `neoweave enrich kg --method llm` uses) over
the first N HotpotQA records (one record is one chunk at the default chunk size), with the local model
server and the response cache off, so every number is a real call. A chunk fails when no valid JSON came
back after the gateway's repair and one re-ask (it then falls back to the fast extractor in a real run).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.config import load_settings  # noqa: E402
from neoweave.enrich.extract_llm import LLMExtractor  # noqa: E402
from neoweave.llm import create_gateway  # noqa: E402
from neoweave.llm.local import stop_local_servers  # noqa: E402
from neoweave.nlp.extract_fast import FastExtractor  # noqa: E402


def run(model: str, grammar: bool, texts: list[tuple[str, str]], data_dir: Path) -> dict:
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": data_dir},
                                                    "llm": {"model": model, "cache": False}})
    llm = create_gateway(settings)
    extractor = LLMExtractor(llm, grammar=grammar, fallback=FastExtractor())
    extractor.extract(texts[:1])  # warm-up: model load and the cached instruction prefix
    seconds, results = [], []
    for chunk in texts:
        started = time.perf_counter()
        [result] = extractor.extract([chunk])
        seconds.append(time.perf_counter() - started)
        results.append(result)
    ok = [r for r in results if r.error is None]
    calls = llm.ledger.totals(stage="enrich:kg")
    n = len(results)
    return {
        "model": model, "grammar": grammar, "chunks": n,
        "seconds_total": round(sum(seconds), 1), "seconds_per_chunk_p50": round(statistics.median(seconds), 2),
        "prompt_tokens_per_chunk": round(sum(r.prompt_tokens for r in results) / n, 1),
        "completion_tokens_per_chunk": round(sum(r.completion_tokens for r in results) / n, 1),
        "calls_per_chunk": round((calls.calls - 1) / n, 2) if calls.calls else None,
        "failure_rate": round(1 - len(ok) / n, 3),
        "entities_per_chunk": round(sum(len(r.mentions) for r in ok) / max(len(ok), 1), 2),
        "relations_per_chunk": round(sum(len(r.relations) for r in ok) / max(len(ok), 1), 2),
        "dropped_per_chunk": round(sum(r.dropped for r in ok) / max(len(ok), 1), 2),
        "errors": sorted({(r.error or "")[:120] for r in results if r.error})[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared/data/hotpotqa/corpus.jsonl")
    parser.add_argument("--models", default="qwen2.5-coder-0.5b,qwen2.5-coder-1.5b")
    parser.add_argument("--limit", type=int, default=40)
    parser.add_argument("--grammar", choices=("on", "off", "both"), default="off")
    parser.add_argument("--out", type=Path, default=ROOT / "docs/benchmarks/extract_llm.json")
    args = parser.parse_args()
    with args.corpus.open(encoding="utf-8") as handle:
        records = [json.loads(line) for line in handle if line.strip()][:args.limit]
    texts = [(r["id"], r["text"]) for r in records]
    modes = {"on": [True], "off": [False], "both": [False, True]}[args.grammar]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            for grammar in modes:
                row = run(model.strip(), grammar, texts, Path(tmp))
                print(json.dumps(row), flush=True)
                rows.append(row)
            stop_local_servers(Path(tmp))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"corpus": str(args.corpus.name), "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
