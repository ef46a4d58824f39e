"""ppr's walk index after a small write: updated from the previous index and the record of change, against a
whole build (both reuse the vectors that did not change), on a copy of a built graph.

    python benchmarks/walk_update.py --graph DATA_DIR --work /tmp/walk-update --out docs/benchmarks/walk_update.json \
        [--label python_docs] [--records 3] [--repeat 2]   # NEOWEAVE_GRAPH=name for a graph not named neoweave

The graph directory (an embedded store's data directory, enriched by `enrich kg`) is copied to `--work` first,
so it is never changed. In one process: the copy's walk index is made current (after one `enrich kg` at this
code when the graph has no record of change yet: its first run reads every entity and starts the log), then
`--records` short new records are ingested and enriched one at a time through the knowledge base (each `enrich
kg` updates the index, timed with the run). One more record is ingested and enriched outside the knowledge base
(`enrich.run`, which leaves the index behind), and the index is built from the one before that write,
`--repeat` times each way: updated (the mentions and relations of the logged entities read again) and whole
(every mention and relation read). The two must hold the same arrays. The copy's server is stopped at the end.
Run it alone.
"""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

import neoweave
from neoweave.enrich import run
from neoweave.enrich.kg_changes import read_log
from neoweave.query.walk_build import build_walk_index
from neoweave.query.walk_index import WalkIndex, WalkIndexes

sys.path.insert(0, str(Path(__file__).resolve().parent))
from small_writes import record

UPDATE = ("walk_index_mentions_of", "walk_index_related_of")
WHOLE = ("walk_index_mentions", "walk_index_related")


def differences(ours: WalkIndex, theirs: WalkIndex) -> list[str]:
    """The arrays that differ (vectors within float32 rounding, as tests/test_walk_update.py compares them)."""
    found = []
    for name in WalkIndex.arrays():
        a, b = getattr(ours, name), getattr(theirs, name)
        if a.shape != b.shape:
            found.append(name)
        elif name.endswith("_vectors"):
            if not np.allclose(a, b, rtol=0, atol=1e-6):
                found.append(name)
        elif not np.array_equal(a, b, equal_nan=a.dtype.kind == "f"):
            found.append(name)
    return found


def timed_builds(kb: neoweave.KnowledgeBase, previous: WalkIndex, update: bool, repeat: int
                 ) -> tuple[list[float], dict[str, int], WalkIndex]:
    seconds, index = [], None
    before = dict(kb.store.statement_counts)
    for _ in range(repeat):
        started = time.perf_counter()
        index = build_walk_index(kb.store, kb.store.stamp() or "timing", previous=previous, update=update)
        seconds.append(round(time.perf_counter() - started, 2))
    statements = {name: (kb.store.statement_counts[name] - before.get(name, 0)) // repeat for name in (*UPDATE, *WHOLE)}
    return seconds, statements, index  # type: ignore[return-value]


def stop_server(data_dir: Path) -> None:
    """The embedded server of a data directory (it outlives this process: a daemon)."""
    subprocess.run([sys.executable, "-m", "neoweave", "--data-dir", str(data_dir), "server", "stop"],
                   capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", type=Path, required=True, help="data directory of a built graph (copied)")
    parser.add_argument("--work", type=Path, required=True, help="where the copy goes (emptied first)")
    parser.add_argument("--out", type=Path, required=True, help="JSON file; the run is stored under --label")
    parser.add_argument("--label", default="graph")
    parser.add_argument("--records", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if args.work.exists():
        stop_server(args.work)
    shutil.rmtree(args.work, ignore_errors=True)
    started = time.perf_counter()
    shutil.copytree(args.graph, args.work, ignore=shutil.ignore_patterns("server.lock", "*.sock", "*.pid"))
    commit = subprocess.run(["git", "-C", str(Path(__file__).resolve().parents[1]), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    result: dict[str, object] = {"graph": str(args.graph), "copy_seconds": round(time.perf_counter() - started, 1),
                                 "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="minutes"),
                                 "commit": commit or None}
    with neoweave.open(args.work, limits=neoweave.Limits.unbounded()) as kb:
        held, state = read_log(kb.store), kb.walk_index()
        if held is None or held.token is None or held.fingerprint is None:
            started = time.perf_counter()
            kb.enrich("kg")  # the first run at this code reads every entity and starts the log
            result["prepare_enrich_kg_seconds"] = round(time.perf_counter() - started, 1)
        started = time.perf_counter()
        state = kb.walk_index(rebuild=True)
        result["prepare_walk_index_seconds"] = round(time.perf_counter() - started, 1)
        writes = []
        for number in range(args.records):
            started = time.perf_counter()
            kb.ingest([record(900 + number)])
            ingested = time.perf_counter() - started
            report = kb.enrich("kg")
            enriched = time.perf_counter() - started - ingested
            writes.append({"ingest_s": round(ingested, 2), "enrich_kg_s": round(enriched, 2),
                           "finish_scoped": report.counters.get("finish_scoped"),
                           "entities_in_scope": report.counters.get("entities_in_scope"),
                           "walk_index_current": kb.walk_index()["current"]})
        result["writes"] = writes
        previous = WalkIndexes.of(kb.store).current()
        assert previous is not None and previous.log is not None, state
        # in memory: the files of this index go when a newer one is saved
        previous = WalkIndex(**{name: np.array(getattr(previous, name)) for name in WalkIndex.arrays()},
                             stamp=previous.stamp, log=previous.log, position=previous.position)
        kb.ingest([record(900 + args.records)])  # one more write, the index left behind
        run("kg", kb.store, embedder=kb.embedder, progress=False)
        logged = read_log(kb.store).since(previous.log, previous.position)
        result["entities_logged_since"] = None if logged is None else len(set(logged))
        updated_s, updated_statements, updated = timed_builds(kb, previous, True, args.repeat)
        whole_s, whole_statements, whole = timed_builds(kb, previous, False, args.repeat)
        result.update({
            "index": whole.describe(), "updated_seconds": updated_s, "updated_median": statistics.median(updated_s),
            "updated_statements": updated_statements, "whole_seconds": whole_s,
            "whole_median": statistics.median(whole_s), "whole_statements": whole_statements,
            "differences": differences(updated, whole), "neoweave": str(Path(neoweave.__file__).parent)})
    stop_server(args.work)
    print(json.dumps(result, indent=1))
    held_results = json.loads(args.out.read_text()) if args.out.exists() else {}
    held_results[args.label] = result
    args.out.write_text(json.dumps(held_results, indent=1) + "\n")


if __name__ == "__main__":
    main()
