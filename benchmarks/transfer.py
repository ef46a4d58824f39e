"""Export a knowledge base, import it into a fresh embedded store, and check that the copy answers the same:
time and size of each step, counts, and every question's retrieval by each strategy (chunk ids, order, scores).

    python benchmarks/transfer.py --data-dir GRAPH_DIR --qa QA.jsonl --out docs/benchmarks/transfer_NAME.json

The source graph is only read. The export and the imported copy are written under --work (removed afterwards unless
--keep); the copy's embedded server is stopped at the end. Run it alone for the timings.
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

from neoweave.kb import Limits, open_kb


def _directory_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _retrievals(kb, questions: list[str], strategies: list[str], k: int) -> dict[str, list[list[tuple[str, float]]]]:
    return {name: [[(item.chunk_id, round(item.score, 6)) for item in kb.retrieve(q, name, k).items]
                   for q in questions] for name in strategies}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="the knowledge base to export (only read)")
    parser.add_argument("--qa", type=Path, required=True, help="questions (JSONL with a 'question' field)")
    parser.add_argument("--strategies", default="naive,larag,kg,ppr")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--limit", type=int, default=50, help="questions compared")
    parser.add_argument("--work", type=Path, default=None, help="where the export and copy go (default: temp)")
    parser.add_argument("--keep", action="store_true", help="keep the export and the copy")
    parser.add_argument("--out", type=Path, required=True, help="JSON results")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    work = Path(tempfile.mkdtemp(prefix="transfer-", dir=args.work))
    export_dir, copy_dir = work / "export", work / "copy"
    questions = [json.loads(line)["question"] for line in args.qa.read_text(encoding="utf-8").splitlines()
                 if line.strip()][: args.limit]
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    try:
        with open_kb(args.data_dir, limits=Limits.unbounded(), read_only=True) as source:
            counts = source.status()
            started = time.perf_counter()
            manifest = source.export(export_dir)
            export_s = time.perf_counter() - started
            before = _retrievals(source, questions, strategies, args.k)
        with open_kb(copy_dir, limits=Limits.unbounded()) as copy:
            started = time.perf_counter()
            report = copy.import_from(export_dir)
            import_s = time.perf_counter() - started
            after = _retrievals(copy, questions, strategies, args.k)
            copied = copy.status()
        subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(copy_dir), "server", "stop"],
                       capture_output=True, check=False)
        records = report["records"]
        result = {
            "source": str(args.data_dir), "records": records,
            "nodes": counts["nodes"], "relationships": counts["relationships"],
            "export_seconds": round(export_s, 1), "export_records_per_s": round(records / export_s),
            "export_bytes": _directory_bytes(export_dir),
            "import_seconds": round(import_s, 1), "import_records_per_s": round(records / import_s),
            "counts_equal": copied["nodes"] == counts["nodes"] and copied["relationships"] == counts["relationships"],
            "questions": len(questions), "k": args.k,
            "identical_retrievals": {name: sum(a == b for a, b in zip(before[name], after[name], strict=True))
                                     for name in strategies},
            "manifest_files": len(manifest["files"]),
        }
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
