"""How long the command line takes, end to end, as a user types it: process start, imports, store, models.

    .venv/bin/python benchmarks/cli_latency.py --data-dir /work/bench/cli \\
        --corpus ../shared/data/hotpotqa/corpus.jsonl --runs 7 --out docs/benchmarks/cli_latency.json

Builds the graph in `--data-dir` when it is empty (ingest + `enrich kg --method fast`), then times, each command
`--runs` times in a fresh process (median, min, max of wall time):

- commands that need no model: `neoweave --help`, `neoweave status`, `neoweave cypher "MATCH ..."`;
- `neoweave query` in-process (`--no-server`) for naive and ppr, once per embedder runtime (`--runtimes`);
- `neoweave query` while a `neoweave serve` for the same data directory runs (the warm path), naive and ppr.

The embedded FalkorDB server keeps running between commands by design, so every run after the first finds it
up; the first run of the first command starts it (reported apart as `server_start`). Targets (issue 41): no-model
commands <= 1 s, in-process cold query <= 4 s, query through a running server <= 0.5 s, on two idle cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NEOWEAVE = [sys.executable, "-m", "neoweave.cli"]
QUESTION = "What language were books being translated into during the era of Haymo of Faversham?"  # qa.jsonl


def timed(command: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT)
    seconds = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return seconds


def series(name: str, command: list[str], env: dict[str, str], runs: int) -> dict:
    times = [timed(command, env) for _ in range(runs)]
    row = {"name": name, "command": " ".join(command[2:]), "runs": runs, "median_s": round(statistics.median(times), 3),
           "min_s": round(min(times), 3), "max_s": round(max(times), 3)}
    print(f"{name:40} median {row['median_s']:.3f} s (min {row['min_s']:.3f}, max {row['max_s']:.3f})", flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa" / "corpus.jsonl")
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--runtimes", default="onnx,torch", help="embedder runtimes for the in-process query")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "benchmarks" / "cli_latency.json")
    args = parser.parse_args()

    env = {key: value for key, value in os.environ.items() if not key.startswith("NEOWEAVE_")}
    env["NEOWEAVE_DATA_DIR"] = str(args.data_dir.resolve())
    base = [*NEOWEAVE]
    status = subprocess.run([*base, "status", "--json"], capture_output=True, text=True, env=env, cwd=ROOT)
    if status.returncode != 0 or not json.loads(status.stdout)["nodes"].get("Chunk"):
        print("building the graph (ingest + enrich kg fast) ...", flush=True)
        subprocess.run([*base, "ingest", str(args.corpus.resolve()), "--no-progress"], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        subprocess.run([*base, "enrich", "kg", "--no-progress"], env=env, cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
    subprocess.run([*base, "server", "stop"], env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    rows = [{"name": "server_start", "command": "status (embedded FalkorDB not running)", "runs": 1,
             "median_s": round(timed([*base, "status"], env), 3)}]
    rows[0]["min_s"] = rows[0]["max_s"] = rows[0]["median_s"]
    rows.append(series("--help", [*base, "--help"], env, args.runs))
    rows.append(series("status", [*base, "status"], env, args.runs))
    rows.append(series("cypher", [*base, "cypher", "MATCH (d:Document) RETURN count(d) AS documents"], env,
                       args.runs))
    for runtime in [r.strip() for r in args.runtimes.split(",") if r.strip()]:
        runtime_env = {**env, "NEOWEAVE_EMBEDDING_RUNTIME": runtime}
        for strategy in ("naive", "ppr"):
            rows.append(series(f"query {strategy} in-process ({runtime})",
                               [*base, "query", QUESTION, "-s", strategy, "--no-server"], runtime_env, args.runs))
    server = subprocess.Popen([*base, "serve", "--port", str(args.port)], env={**env, "PYTHONUNBUFFERED": "1"},
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        started = time.perf_counter()
        for line in server.stdout:  # type: ignore[union-attr]
            if "serving" in line:
                break
        serve_ready = time.perf_counter() - started
        print(f"serve ready after {serve_ready:.1f} s", flush=True)
        rows.append({"name": "serve ready", "command": "serve", "runs": 1, "median_s": round(serve_ready, 3),
                     "min_s": round(serve_ready, 3), "max_s": round(serve_ready, 3)})
        for strategy in ("naive", "ppr"):
            rows.append(series(f"query {strategy} via serve", [*base, "query", QUESTION, "-s", strategy], env,
                               args.runs))
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    record = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "machine": f"{cpu}, {os.cpu_count()} cores",
              "load_average_at_end": Path("/proc/loadavg").read_text().split()[:3], "data_dir": str(args.data_dir),
              "question": QUESTION, "rows": rows}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=1), encoding="utf-8")
    print(f"written {args.out}")


if __name__ == "__main__":
    main()
