"""The local model server's generation threads: llama_cpp.server with --n_threads 1 (its own default on a
two-core machine: half the logical CPUs) against 2, the same chat completions sent to both in turn.

    .venv/bin/python benchmarks/local_threads.py --out docs/benchmarks/local_threads.json
"""

from __future__ import annotations

import argparse
import json
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

from neoweave.llm.local import MODELS, ensure_model_file

README = Path(__file__).resolve().parents[1] / "README.md"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start(model: Path, threads: int) -> tuple[subprocess.Popen, int]:
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
                                "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads)],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(600):
        if process.poll() is not None:
            raise SystemExit(f"the server with {threads} threads exited with {process.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=1)
            return process, port
        except OSError:
            time.sleep(0.5)
    process.terminate()
    raise SystemExit(f"the server with {threads} threads did not start")


def ask(port: int, prompt: str, max_tokens: int) -> tuple[float, dict]:
    body = json.dumps({"model": "local", "messages": [{"role": "user", "content": prompt}],
                       "max_tokens": max_tokens, "temperature": 0, "seed": 1}).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/chat/completions", body,
                                     {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=900) as response:
        usage = json.load(response)["usage"]
    return time.perf_counter() - started, usage


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--threads", default="1,2", help="thread counts compared")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--max-tokens", type=int, default=120)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    model = ensure_model_file(MODELS[args.model])
    text = README.read_text(encoding="utf-8")[:2500]
    prompts = [f"Context:\n{text[i * 300:i * 300 + 1500]}\n\nQuestion: summarise what the context says in three "
               "sentences." for i in range(4)]
    counts = [int(t) for t in args.threads.split(",")]
    servers: dict[int, tuple[subprocess.Popen, int]] = {}
    try:
        for threads in counts:
            servers[threads] = start(model, threads)
        for _, port in servers.values():
            ask(port, "hi", 8)  # load the weights into memory before timing
        seconds: dict[int, list[float]] = {threads: [] for threads in counts}
        tokens: dict[int, list[int]] = {threads: [] for threads in counts}
        for _ in range(args.rounds):
            for prompt in prompts:
                for threads, (_, port) in servers.items():  # in turn: both see the same machine state
                    elapsed, usage = ask(port, prompt, args.max_tokens)
                    seconds[threads].append(round(elapsed, 2))
                    tokens[threads].append(usage["completion_tokens"])
                    print(threads, round(elapsed, 2), usage, flush=True)
    finally:
        for process, _ in servers.values():
            process.terminate()
    result = {"model": args.model, "max_tokens": args.max_tokens, "completions": len(prompts) * args.rounds,
              "threads": {str(t): {"median_s": statistics.median(seconds[t]), "total_s": round(sum(seconds[t]), 1),
                                   "completion_tokens": sum(tokens[t]), "runs_s": seconds[t]} for t in counts}}
    print(json.dumps(result["threads"], indent=1))
    if args.out:
        args.out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
