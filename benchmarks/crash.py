"""Crash safety of the enrich steps: `kill -9` at a random moment, re-run, and the graph is whole.

    .venv/bin/python benchmarks/crash.py --trials 10 --out docs/benchmarks/crash.json

A small corpus (the first `--records` HotpotQA paragraphs) is ingested once into a template data directory.
For each step (kg, tags, rst, communities after kg) and each trial: a copy of the template (with the steps
the step needs already run), `neoweave enrich STEP` started as a process and killed with SIGKILL after a
random delay within the step's clean run time, then the same command run to completion. The graph must
then pass every row of the saved `integrity_checks` query (nothing held twice that a MERGE keeps single, no
orphan), and have the same node and relationship counts as a clean run of the step.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from neoweave.cypher.registry import explore_query  # noqa: E402
from neoweave.store.falkordb_server import EmbeddedFalkorDB  # noqa: E402
from neoweave.store.falkordb_store import FalkorDBStore  # noqa: E402

STEPS = {"kg": [], "tags": [], "rst": [], "communities": ["kg"]}  # step -> steps run before it


def neoweave(data_dir: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), *args],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def run_to_end(data_dir: Path, *args: str) -> float:
    started = time.perf_counter()
    process = neoweave(data_dir, *args)
    _, err = process.communicate()
    if process.returncode != 0:
        raise RuntimeError(f"neoweave {' '.join(args)} failed: {err[-2000:]}")
    return time.perf_counter() - started


def enrich_args(step: str) -> list[str]:
    return ["enrich", step, "--no-progress"]


def stop(data_dir: Path) -> None:
    EmbeddedFalkorDB(data_dir).stop()


def copy_dir(source: Path, target: Path) -> Path:
    if target.exists():
        stop(target)
        shutil.rmtree(target)
    stop(source)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.sock", "*.pid", "*.lock"))
    return target


def inspect(data_dir: Path) -> dict:
    server = EmbeddedFalkorDB(data_dir)
    store = FalkorDBStore(server=server)
    try:
        counts = store.counts()
        broken = {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)}
        return {"nodes": counts.nodes, "relationships": counts.relationships, "broken": broken}
    finally:
        store.close()
        server.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "data" / "hotpotqa" / "corpus.jsonl")
    parser.add_argument("--records", type=int, default=120)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--steps", default="kg,tags,rst,communities")
    parser.add_argument("--work", type=Path, default=Path("/tmp/neoweave-crash"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    args.work.mkdir(parents=True, exist_ok=True)
    corpus = args.work / "corpus.jsonl"
    lines = args.corpus.read_text(encoding="utf-8").splitlines()[:args.records]
    corpus.write_text("\n".join(lines) + "\n", encoding="utf-8")
    template = args.work / "template"
    if not template.exists():
        run_to_end(template, "ingest", str(corpus), "--no-progress")
        stop(template)
    results = {"corpus": f"{args.corpus} (first {args.records} records)", "trials": args.trials, "steps": {}}
    for step in args.steps.split(","):
        base = copy_dir(template, args.work / f"base-{step}")
        for before in STEPS[step]:
            run_to_end(base, *enrich_args(before))
        stop(base)
        clean = copy_dir(base, args.work / f"clean-{step}")
        clean_seconds = run_to_end(clean, *enrich_args(step))
        stop(clean)
        reference = inspect(clean)
        trials = []
        for trial in range(args.trials):
            target = copy_dir(base, args.work / f"trial-{step}")
            delay = rng.uniform(0.5, max(1.0, clean_seconds * 0.9))
            process = neoweave(target, *enrich_args(step))
            time.sleep(delay)
            killed = process.poll() is None
            if killed:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            stop(target)  # the server outlives its client; a restart replays the append-only file
            rerun_seconds = run_to_end(target, *enrich_args(step))
            stop(target)
            state = inspect(target)
            same = state["nodes"] == reference["nodes"] and state["relationships"] == reference["relationships"]
            broken = {name: count for name, count in state["broken"].items() if count}
            trials.append({"trial": trial, "kill_after_s": round(delay, 1), "killed": killed,
                           "rerun_s": round(rerun_seconds, 1), "broken": broken,
                           "same_counts_as_clean": same,
                           **({} if same else {"nodes": state["nodes"], "relationships": state["relationships"]})})
            print(json.dumps({"step": step, **trials[-1]}), flush=True)
        results["steps"][step] = {"clean_seconds": round(clean_seconds, 1), "reference": reference,
                                  "killed": sum(t["killed"] for t in trials),
                                  "whole": sum(not t["broken"] and t["same_counts_as_clean"] for t in trials),
                                  "trials": trials}
        args.out.write_text(json.dumps(results, indent=1))
    for step, row in results["steps"].items():
        print(f"{step}: {row['killed']} of {len(row['trials'])} runs killed mid-step; {row['whole']} whole after "
              f"the re-run (clean run {row['clean_seconds']} s)")


if __name__ == "__main__":
    main()
