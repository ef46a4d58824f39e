"""The long run of incremental-equals-rebuild: hundreds of random sequences of ingest (new, changed and
unchanged pages), delete and enrich (kg, communities, tags, rst; fast methods), some run as `neoweave` commands
killed with SIGKILL at random moments and rerun, each compared with a graph built from scratch.

    .venv/bin/python benchmarks/rebuild_check.py --sequences 500 --kill-sequences 50 \
        --out docs/benchmarks/rebuild_check.json

Writes the counts (sequences, kills, sequences that differ: the whole graph is compared, entity resolution
included) and, per kind of difference, how many sequences
showed it and the first seeds, so a mismatch can be replayed (`--seeds`). CI runs the short version
(tests/test_rebuild_check.py).
"""

from __future__ import annotations

import argparse
import collections
import json
import logging
import re
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.embeddings import Embedder  # noqa: E402
from neoweave.kb.rebuild_check import graph_opener, make_pages, run_sequence, sample_records  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402

log = logging.getLogger("rebuild_check")


def kind(difference: str) -> str:
    """A difference without its particular ids and values: 'node Tag only in the first', 'RELATED weight'."""
    node = re.match(r"node (\S+) .+?(?: (only in the (?:first|second))$|: (?:property )?(\w+))", difference)
    if node:
        return f"node {node.group(1)} {node.group(2) or node.group(3)}"
    edge = re.match(r"(\w+) (\w+):.*? -> (\w+):.*?: (?:(\d+) edge\(s\) in the first, (\d+)|(?:property )?(\w+))",
                    difference)
    if edge:
        what = edge.group(6) or ("more in the first" if int(edge.group(4)) > int(edge.group(5)) else
                                 "more in the second")
        return f"{edge.group(1)} {edge.group(2)}->{edge.group(3)} {what}"
    return difference[:60]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sequences", type=int, default=500, help="in-process sequences")
    parser.add_argument("--kill-sequences", type=int, default=50, help="sequences of commands with kill -9")
    parser.add_argument("--length", type=int, default=6, help="operations per sequence")
    parser.add_argument("--kill-rate", type=float, default=0.6, help="share of commands killed")
    parser.add_argument("--questions", type=int, default=4, help="HotpotQA questions whose gold pages form the corpus")
    parser.add_argument("--seeds", type=int, nargs="*", help="replay these seeds only (in-process)")
    parser.add_argument("--out", type=Path, default=None, help="JSON report")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    work = Path(tempfile.mkdtemp(prefix="neoweave-rebuild-"))
    server = EmbeddedFalkorDB(work / "db")
    server.ensure_running()
    embedder = Embedder("all-MiniLM-L6-v2").load()
    pages = make_pages(sample_records(ROOT / "examples/hotpotqa/corpus.jsonl", ROOT / "examples/hotpotqa/qa.jsonl",
                                      questions=args.questions))

    make_kb = graph_opener(server, embedder, work / "data")

    plan = ([(seed, 0.0) for seed in args.seeds] if args.seeds else
            [(seed, 0.0) for seed in range(1, args.sequences + 1)]
            + [(seed, args.kill_rate) for seed in range(100_001, 100_001 + args.kill_sequences)])
    kinds: dict[str, list[int]] = collections.defaultdict(list)
    differing: list[dict] = []
    totals = collections.Counter()
    started = time.monotonic()

    def report() -> dict:
        """What ran so far (written after every sequence, so a run cut short still reports)."""
        return {
            "sequences_run": totals["plain"], "kill_sequences_run": totals["killed"], "kills": totals["kills"],
            "planned": {"sequences": args.sequences, "kill_sequences": args.kill_sequences},
            "length": args.length, "pages": len(pages), "seconds": round(time.monotonic() - started),
            "differing": len(differing),
            "differing_with_different_merge_decisions": totals["merges_differ"],
            "kinds": {k: {"sequences": len(v), "seeds": v[:10]}
                      for k, v in sorted(kinds.items(), key=lambda item: -len(item[1]))},
            "examples": differing[:20],
        }

    try:
        for index, (seed, kill_rate) in enumerate(plan, 1):
            outcome = run_sequence(seed, pages, make_kb, work, length=args.length, kill_rate=kill_rate)
            totals["killed" if kill_rate else "plain"] += 1
            totals["kills"] += outcome.kills
            totals["merges_differ"] += outcome.merges_differ
            if not outcome.same:
                differing.append({"seed": seed, "killed": kill_rate > 0, "merges_differ": outcome.merges_differ,
                                  "operations": outcome.operations, "differences": outcome.differences[:20]})
                for found in sorted({kind(d) for d in outcome.differences}):
                    kinds[found].append(seed)
            elapsed = time.monotonic() - started
            log.info("%d/%d seed %d: %s%s%s; %d differ so far; ETA %.0f s", index, len(plan), seed,
                     "same" if outcome.same else f"{len(outcome.differences)} differences",
                     f", {outcome.kills} killed" if outcome.kills else "",
                     ", merge decisions differ" if outcome.merges_differ else "", len(differing),
                     elapsed / index * (len(plan) - index))
            if args.out:
                args.out.write_text(json.dumps(report(), indent=1) + "\n")
    finally:
        server.stop()
    print(json.dumps({k: v for k, v in report().items() if k != "examples"}, indent=1))


if __name__ == "__main__":
    main()
