"""How much longer a query waits while a write command runs (issue 74: each poll waits at most 1 s longer than an
idle read), measured as a user meets it:

    nice .venv/bin/python benchmarks/reader_wait.py --data-dir /tmp/reader-wait-hp \\
        --write "ingest examples/hotpotqa/corpus.jsonl" --write "enrich kg" \\
        --qa examples/hotpotqa/qa.jsonl --out docs/benchmarks/reader_wait_hotpotqa.json

From the repository root: `neoweave serve` for the data directory runs as its own process; a client polls POST
/query (k=5) without pause, rotating over every strategy that needs no LLM (with the parameters that keep it off
the LLM, as tests/test_reader_snapshots.py takes them) and the first `--questions` questions of `--qa`, while each
`--write` command runs as its own process, one after the other; then, with nothing writing, it polls each
(strategy, question) as many times again (idle). A poll's extra wait is its latency minus the idle median of its
(strategy, question).

Beside the polls, /proc/locks is sampled every `--lock-sample` seconds for the graph's snapshot gate files
(`store.snapshot_gate`): how long each write unit held the gate exclusively, and how long the server waited for
it, each placed after the last line the command had printed (`-v` logs and progress bars, stamped as they
arrive); FalkorDB's slow log names each command's slowest statements. `--out` gets the summary, the holds and
every poll answered during the writes; `--work` every poll. The data directory is written to: give a copy.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reader_wait_report import TARGET_S, gate_summary, idle_medians, slow_statements, summarise

ROOT = Path(__file__).resolve().parents[1]
NEOWEAVE = str(ROOT / ".venv" / "bin" / "neoweave")
READS_THE_GRAPH = {"ppr": {"walk_index": "store"}}
"""ppr reads the graph, as tests/test_reader_snapshots.py has it (its walk index is built after a command)."""


def strategies() -> list[tuple[str, dict[str, Any]]]:
    from neoweave.registry import llm_free_strategies

    return [(name, {**parameters, **READS_THE_GRAPH.get(name, {})})
            for name, parameters in llm_free_strategies().items()]


class Clock:
    """Seconds since the run started, and the phase now (a write command's name, `idle`, ...)."""

    def __init__(self) -> None:
        self.zero = time.monotonic()
        self.phase = "warmup"

    def now(self) -> float:
        return time.monotonic() - self.zero


class Poller(threading.Thread):
    """POST /query without pause, rotating over strategies and questions; one record per poll."""

    def __init__(self, port: int, clock: Clock, asks: list[tuple[str, dict[str, Any]]], questions: list[str],
                 k: int) -> None:
        super().__init__(daemon=True)
        self.url, self.clock, self.asks, self.questions, self.k = f"http://127.0.0.1:{port}/query", clock, asks, \
            questions, k
        self.polls: list[dict[str, Any]] = []
        self.stop = threading.Event()
        self.quota: dict[tuple[str, int], int] | None = None  # idle: polls still owed per (strategy, question)

    def poll(self, strategy: str, parameters: dict[str, Any], index: int) -> dict[str, Any]:
        body = json.dumps({"question": self.questions[index], "strategy": strategy, "k": self.k,
                           "parameters": parameters}).encode()
        request = urllib.request.Request(self.url, body, {"Content-Type": "application/json"})
        phase, start = self.clock.phase, self.clock.now()
        error = None
        try:
            with urllib.request.urlopen(request, timeout=600) as reply:
                reply.read()
                status = reply.status
        except urllib.error.HTTPError as exc:
            status, error = exc.code, exc.read().decode(errors="replace")[:400]
        except OSError as exc:
            status, error = 0, repr(exc)[:400]
        latency = self.clock.now() - start
        return {"phase": phase if phase == self.clock.phase else f"{phase}>{self.clock.phase}", "strategy": strategy,
                "question": index, "start_s": round(start, 4), "latency_s": round(latency, 4), "status": status,
                "error": error}

    def run(self) -> None:
        turn = 0
        while not self.stop.is_set():
            strategy, parameters = self.asks[turn % len(self.asks)]
            index = (turn // len(self.asks)) % len(self.questions)
            turn += 1
            if self.quota is not None:
                if not any(self.quota.values()):
                    break
                if self.quota.get((strategy, index), 0) <= 0:
                    continue
                self.quota[(strategy, index)] -= 1
            self.polls.append(self.poll(strategy, parameters, index))


class LockWatcher(threading.Thread):
    """Samples /proc/locks: intervals during which a process held (or waited for) the gate's lock files."""

    def __init__(self, data_dir: Path, clock: Clock, every: float) -> None:
        super().__init__(daemon=True)
        self.data_dir, self.clock, self.every = data_dir, clock, every
        self.stop = threading.Event()
        self.open: dict[tuple, float] = {}
        self.intervals: list[dict[str, Any]] = []

    def inodes(self) -> dict[int, str]:
        found = {}
        for path in self.data_dir.glob("*.lock"):
            if path.name.startswith(("reads-", "writes-")):
                found[path.stat().st_ino] = "reads" if path.name.startswith("reads-") else "turnstile"
        return found

    def run(self) -> None:
        files: dict[int, str] = {}
        while not self.stop.is_set():
            if len(files) < 2:
                files = self.inodes()
            now, seen = self.clock.now(), set()
            for line in Path("/proc/locks").read_text().splitlines():
                fields = line.split()
                blocked = fields[1] == "->"
                if blocked:
                    fields = fields[1:]
                if len(fields) < 6 or fields[1] != "FLOCK":
                    continue
                inode = int(fields[5].rsplit(":", 1)[1])
                if inode in files:
                    seen.add((files[inode], fields[3], int(fields[4]), blocked))
            for key in seen - self.open.keys():
                self.open[key] = now
            for key in set(self.open) - seen:
                started = self.open.pop(key)
                self.intervals.append({"file": key[0], "mode": key[1], "pid": key[2], "waiting": key[3],
                                       "start_s": round(started, 4), "seconds": round(now - started, 4),
                                       "phase": self.clock.phase})
            time.sleep(self.every)


def phase_name(words: str) -> str:
    """A command's words without its paths and options: `ingest`, `enrich kg`."""
    return " ".join(word for word in words.split() if "/" not in word and not word.startswith("-"))


def run_command(words: str, data_dir: Path, clock: Clock, log: list[tuple[float, str]], out: Path) -> dict:
    """One write command as its own process from the repository root, as a user types it (`-v` for its log
    lines); its stderr lines (log lines, progress bars) stamped as they arrive, a bar's every half second and
    its end."""
    command = [NEOWEAVE, "--data-dir", str(data_dir), "-v", *words.split()]
    code_version = version()
    clock.phase = phase_name(words)
    started = clock.now()
    with out.open("w") as stdout:
        process = subprocess.Popen(command, cwd=ROOT, stdout=stdout, stderr=subprocess.PIPE)
        while chunk := os.read(process.stderr.fileno(), 65536):  # type: ignore[union-attr]
            # a bar redraws as a carriage return and the bar, with no line end: each write is taken as it
            # arrives (reading lines would hold a bar until the next redraw)
            stamp = clock.now()
            for raw in re.split(rb"[\r\n]", chunk):
                line = re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", raw.decode(errors="replace")).strip()[:300]
                if line and (not log or line.split(":")[0] != log[-1][1].split(":")[0] or stamp - log[-1][0] > 0.5
                             or "100%" in line):
                    log.append((stamp, line))
        code = process.wait()
    ended = clock.now()
    clock.phase = "between"
    print(f"{words}: exit {code}, {ended - started:.1f} s", flush=True)
    return {"command": " ".join(["neoweave", "--data-dir", "D", *command[3:]]), "pid": process.pid, "exit": code,
            "start_s": round(started, 3), "seconds": round(ended - started, 3), "code": code_version}


def version() -> dict[str, Any]:
    """The commit the working tree is at and the library files changed in it (the code a process started now runs:
    a shared tree moves under a long run)."""
    def git(*words: str) -> str:
        return subprocess.run(["git", *words], cwd=ROOT, capture_output=True, text=True).stdout.rstrip()

    return {"commit": git("rev-parse", "--short", "HEAD").strip(),
            "changed": [line[3:] for line in git("status", "--porcelain", "--", "neoweave").splitlines()],
            "pythonpath": os.environ.get("PYTHONPATH")}


def load() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="an empty directory, or a graph to write to")
    parser.add_argument("--write", action="append", required=True,
                        help="a write command's words after `neoweave --data-dir D` (repeatable, run in order)")
    parser.add_argument("--qa", type=Path, required=True, help="questions (jsonl with a `question` field)")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--port", type=int, default=8787)
    parser.add_argument("--lock-sample", type=float, default=0.005, help="seconds between /proc/locks samples")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--work", type=Path, help="where every poll, the commands' reports and the server's log "
                        "go (default: beside the data directory)")
    args = parser.parse_args()
    args.work = args.work or args.data_dir.parent
    fresh = not args.data_dir.exists() or not any(args.data_dir.iterdir())
    args.data_dir.mkdir(parents=True, exist_ok=True)
    questions = [json.loads(line)["question"] for line in args.qa.read_text().splitlines()[:args.questions]]
    asks = strategies()
    phases = [phase_name(words) for words in args.write]
    base = [NEOWEAVE, "--data-dir", str(args.data_dir)]
    if fresh:
        subprocess.run([*base, "init"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    clock, log, commands = Clock(), [], []
    loads = [(0.0, load())]
    args.work.mkdir(parents=True, exist_ok=True)
    server_log = (args.work / "serve.log").open("w")
    serve_code = version()
    server = subprocess.Popen([*base, "serve", "--port", str(args.port)], cwd=ROOT, stdout=server_log,
                              stderr=subprocess.STDOUT)
    watcher = LockWatcher(args.data_dir, clock, args.lock_sample)
    poller = Poller(args.port, clock, asks, questions, args.k)
    try:
        for _ in range(600):
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{args.port}/status", timeout=5).read()
                break
            except OSError:
                time.sleep(0.5)
        for index in range(len(questions)):  # warm-up: the server's models and caches
            for strategy, parameters in asks:
                poller.poll(strategy, parameters, index)
        watcher.start()
        poller.start()
        slow_statements(args.data_dir)
        for words in args.write:
            commands.append(run_command(words, args.data_dir, clock, log,
                                        args.work / f"{len(commands)}-{words.split()[0]}.out"))
            commands[-1]["slowest_statements"] = slow_statements(args.data_dir)
            loads.append((clock.now(), load()))
        poller.stop.set()
        poller.join()
        during: dict[tuple[str, int], int] = {}
        for poll in poller.polls:
            if poll["phase"].split(">")[0] in phases:
                during[(poll["strategy"], poll["question"])] = during.get((poll["strategy"], poll["question"]), 0) + 1
        clock.phase = "idle"
        idle = Poller(args.port, clock, asks, questions, args.k)
        idle.quota = dict(during)
        idle.run()
        loads.append((clock.now(), load()))
    finally:
        watcher.stop.set()
        server.send_signal(signal.SIGINT)
        server.wait(timeout=60)
        subprocess.run([*base, "server", "stop"], cwd=ROOT, stdout=subprocess.DEVNULL)
    polls = poller.polls + idle.polls
    rows = summarise(polls, phases)
    gates = gate_summary(watcher.intervals, commands, server.pid, log)
    medians = idle_medians(polls)
    answered = [[p["phase"], p["strategy"], p["question"], p["start_s"], p["latency_s"],
                 round(p["latency_s"] - medians[(p["strategy"], p["question"])], 4)] for p in polls
                if p["phase"].split(">")[0] in phases and p["status"] == 200
                and (p["strategy"], p["question"]) in medians]
    record = {"date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"), "cores": os.cpu_count(),
              "argv": sys.argv[1:], "questions": questions, "strategies": asks, "k": args.k, "target_s": TARGET_S,
              "serve_code": serve_code, "commands": commands, "load": loads, "summary": rows, "gate": gates,
              "answered_during_writes": {"fields": ["phase", "strategy", "question", "start_s", "latency_s",
                                                    "extra_wait_s"], "rows": "ROWS"},
              "command_log": [[round(stamp, 3), line] for stamp, line in log]}
    args.out.write_text(json.dumps(record, indent=1).replace('"ROWS"', "[\n" + ",\n".join(
        json.dumps(row, ensure_ascii=False) for row in answered) + "]") + "\n")
    (args.work / f"{args.out.stem}.polls.json").write_text(json.dumps(polls) + "\n")
    for row in rows:
        lat, extra = row["latency_s"], row["extra_wait_s"]
        print(f"{row['phase'][:22]:22} {row['strategy']:16} polls {row['polls']:4} ok {row['ok']:4} "
              f"p50 {lat['p50']} p95 {lat['p95']} max {lat['max']}  extra p95 {extra['p95']} max {extra['max']} "
              f"non-200 {row['non_200'] or ''}")
    for gate in gates:
        print(json.dumps({key: gate[key] for key in gate if key != "holds"}))
        for hold in sorted(gate["holds"], key=lambda hold: -hold["seconds"])[:8]:
            print("   ", hold)


if __name__ == "__main__":
    main()
