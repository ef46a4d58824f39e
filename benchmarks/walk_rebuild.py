"""Time a rebuild of ppr's walk index from the previous one (what `enrich kg` pays after every run when no vector
changed), on a built graph. Only reads the graph.

    python benchmarks/walk_rebuild.py --data-dir DIR [--repeat 3]
    cd OLD_WORKTREE && PYTHONPATH=. python /path/to/benchmarks/walk_rebuild.py --data-dir DIR   # an older commit

Prints one JSON line: the times of each build, their median, and the index's size. The data directory needs a
saved walk index (`enrich kg` or `neoweave walk-index` made one). Run it alone.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import neoweave
from neoweave.query.walk_build import build_walk_index
from neoweave.query.walk_index import WalkIndex, WalkIndexes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with neoweave.open(args.data_dir, read_only=True) as kb:
        directory = WalkIndexes.of(kb.store).directory
        previous = WalkIndex.latest(directory) if directory else None
        if previous is None:
            raise SystemExit(f"{args.data_dir}: no saved walk index (run `neoweave walk-index` there first)")
        seconds = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            index = build_walk_index(kb.store, "timing", previous=previous)
            seconds.append(round(time.perf_counter() - started, 2))
    print(json.dumps({"neoweave": str(Path(neoweave.__file__).parent), "data_dir": str(args.data_dir),
                      "seconds": seconds, "median": statistics.median(seconds), **index.describe()}))


if __name__ == "__main__":
    main()
