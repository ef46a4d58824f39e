"""Export a knowledge base, import it into a fresh embedded store, and check that the copy answers the same:
time and size of each step, counts, and every question's retrieval by each strategy (chunk ids, order, scores).

    python benchmarks/transfer.py --data-dir GRAPH_DIR --qa QA.jsonl --out docs/benchmarks/transfer_NAME.json

The source graph is only read. The export and the imported copy are written under --work (removed afterwards unless
--keep); the copy's embedded server is stopped at the end. Run it alone for the timings. `--strategies llm-free`
(the default) is every registered strategy that can retrieve without an LLM; one the graph lacks a layer for
(`enrich communities`, `tags`, `rst`) is listed under `skipped` with the reason. `--restore` also takes a backup of
the source and restores it into a fresh data directory, compared the same way. The source's embedded server is
stopped at the end when this run started it.
"""

from __future__ import annotations

import argparse
import json
import logging
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from neoweave.errors import NeoweaveError
from neoweave.kb import Limits, open_kb
from neoweave.registry import STRATEGIES, llm_free_strategies
from neoweave.store.falkordb_server import EmbeddedFalkorDB

Retrievals = dict[str, list[list[tuple[str, float]]]]


def _directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _strategies(text: str) -> dict[str, dict]:
    """Strategy name -> the parameters it runs with: every LLM-free one for 'llm-free', else the names given."""
    if text == "llm-free":
        return llm_free_strategies()
    return {name.strip(): dict(STRATEGIES.get(name.strip()).llm_free) for name in text.split(",") if name.strip()}


def _retrievals(kb, questions: list[str], strategies: dict[str, dict], k: int, skipped: dict[str, str]
                ) -> Retrievals:
    """Per strategy, each question's (chunk id, score) list; a strategy that cannot run on the graph (a missing
    layer) goes to `skipped` with its message."""
    found: Retrievals = {}
    for name, parameters in strategies.items():
        if name in skipped:
            continue
        try:
            found[name] = [[(item.chunk_id, item.score) for item in kb.retrieve(q, name, k, **parameters).items]
                           for q in questions]
        except NeoweaveError as error:
            skipped[name] = str(error)
    return found


def _compare(before: Retrievals, after: Retrievals) -> dict[str, dict]:
    """Per strategy: questions with the same chunk ids in the same order, and the largest score change there."""
    out = {}
    for name, answers in before.items():
        same = [(a, b) for a, b in zip(answers, after.get(name, []), strict=False)
                if [c for c, _ in a] == [c for c, _ in b]]
        moved = max((abs(x[1] - y[1]) for a, b in same for x, y in zip(a, b, strict=True)), default=0.0)
        out[name] = {"identical": len(same), "of": len(answers), "largest_score_change": float(f"{moved:.2e}")}
    return out


def _stop_server(data_dir: Path) -> None:
    subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), "server", "stop"],
                   capture_output=True, check=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the knowledge base to export (only read)")
    parser.add_argument("--qa", type=Path, required=True, help="questions (JSONL with a 'question' field)")
    parser.add_argument("--strategies", default="llm-free", help="comma-separated names, or llm-free (default)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=50, help="questions compared")
    parser.add_argument("--work", type=Path, default=None, help="where the export and copy go (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the export and the copy")
    parser.add_argument("--restore", action="store_true", help="also back up the source and restore it, compared")
    parser.add_argument("--out", type=Path, required=True, help="JSON results")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    if args.work is not None:
        args.work.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="transfer-", dir=args.work))
    export_dir, copy_dir = work / "export", work / "copy"
    questions = [json.loads(line)["question"] for line in args.qa.read_text(encoding="utf-8").splitlines()
                 if line.strip()][: args.limit]
    strategies = _strategies(args.strategies)
    source_was_running = EmbeddedFalkorDB(args.data_dir).is_running()
    skipped: dict[str, str] = {}
    restored: dict[str, dict] | None = None
    try:
        with open_kb(args.data_dir, limits=Limits.unbounded(), read_only=True) as source:
            counts = source.status()
            started = time.perf_counter()
            manifest = source.export(export_dir)
            export_s = time.perf_counter() - started
            before = _retrievals(source, questions, strategies, args.k, skipped)
            if args.restore:
                source.backup(work / "backup", llm_cache=False)
        with open_kb(copy_dir, limits=Limits.unbounded()) as copy:
            started = time.perf_counter()
            report = copy.import_from(export_dir)
            import_s = time.perf_counter() - started
            after = _retrievals(copy, questions, strategies, args.k, {})
            copied = copy.status()
        _stop_server(copy_dir)
        if args.restore:
            with open_kb(work / "restored", limits=Limits.unbounded()) as copy:
                copy.restore(work / "backup")
                restored = _compare(before, _retrievals(copy, questions, strategies, args.k, {}))
            _stop_server(work / "restored")
        imported = _compare(before, after)
        records = report["records"]
        result = {
            "source": str(args.data_dir), "records": records,
            "nodes": counts["nodes"], "relationships": counts["relationships"],
            "export_seconds": round(export_s, 1), "export_records_per_s": round(records / export_s),
            "export_bytes": _directory_bytes(export_dir),
            "import_seconds": round(import_s, 1), "import_records_per_s": round(records / import_s),
            "counts_equal": copied["nodes"] == counts["nodes"] and copied["relationships"] == counts["relationships"],
            "questions": len(questions), "k": args.k,
            "identical_retrievals": {name: row["identical"] for name, row in imported.items()},
            "largest_score_change": {name: row["largest_score_change"] for name, row in imported.items()},
            "skipped": skipped,
            "manifest_files": len(manifest["files"]),
        }
        if restored is not None:
            result["identical_after_restore"] = {name: row["identical"] for name, row in restored.items()}
    finally:
        if not source_was_running:
            _stop_server(args.data_dir)
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
