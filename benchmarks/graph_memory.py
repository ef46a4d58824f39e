"""FalkorDB's own account of built graphs' memory, each loaded afresh from its files: `GRAPH.MEMORY USAGE`
(attributes by label and relationship type, matrices, indexes) and the server's used memory, in MB.

    .venv/bin/python benchmarks/graph_memory.py DATA_DIR [DATA_DIR ...] [--out OUT.json]

Stop a graph's server first (`neoweave --data-dir DATA_DIR server stop`) so that the used memory is that of a
fresh load: memory freed by writes in place is not returned to the allocator. Issue 45's "half the memory"
(docs/benchmarks/indexing.md, "Where the memory goes").
"""
import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from indexing import graph_memory, stop_server

import neoweave


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_dirs", nargs="+")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    measured = {}
    for data_dir in args.data_dirs:
        stop_server(data_dir)
        with neoweave.open(data_dir, limits=neoweave.Limits.unbounded()) as kb:
            measured[data_dir] = graph_memory(kb.store)
        stop_server(data_dir)
        usage = measured[data_dir]
        print(f"{data_dir}: graph {usage['total_graph_sz_mb']} MB, server used {usage['server_used_memory_mb']} MB, "
              f"edges {usage['amortized_edge_attributes_by_type_sz_mb']}", flush=True)
    if args.out:
        args.out.write_text(json.dumps(measured, indent=1) + "\n")


if __name__ == "__main__":
    main()
