"""Indexing end to end, as a user runs it: `neoweave ingest` then `neoweave enrich kg`, each a fresh process into a
fresh data directory, process start-up included; where each second goes, and what a model variant costs.

    .venv/bin/python benchmarks/indexing.py --out docs/benchmarks/indexing.json \\
        --corpus hotpotqa=examples/hotpotqa/corpus.jsonl \\
        --corpus python-docs=PYTHON_FAQ/corpus@https://docs.python.org/3.11/ \\
        --model all-MiniLM-L6-v2 --model all-MiniLM-L6-v2:int8 \\
        --eval hotpotqa=examples/hotpotqa/qa.jsonl --eval python-docs=PYTHON_FAQ/qa.jsonl:with-links

For every corpus and model: wall seconds of each command, CPU seconds of the command with its children
(spaCy workers) and of the embedded FalkorDB server, the reports' own phase times (parse/embed/write; extraction,
writes and each graph-wide phase), chunks/s end to end, the tokens the model read (the embedding floor), and
FalkorDB's memory by layer.
With `--eval`, naive and ppr retrieval at k 2, 5, 10 on each graph built (the quality side of a faster model
variant). Run alone on an idle machine. `--work DIR` keeps the graphs (default: a temporary directory, removed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = sys.executable
STRATEGIES = "naive,ppr"


def server_cpu_seconds(data_dir: Path) -> float:
    """CPU seconds the data directory's FalkorDB server has used so far (0 when none runs)."""
    socket = f"unixsocket:{data_dir}/falkordb.sock"
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if socket in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            continue
    return 0.0


def timed(command: list[str], env: dict[str, str], data_dir: Path) -> tuple[dict, dict]:
    """Run a neoweave command printing a JSON report; its report and wall/CPU seconds."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = server_cpu_seconds(data_dir)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 3):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(done.stdout), {"wall": round(wall, 2), "cpu": round(cpu, 2),
                                     "server_cpu": round(server_cpu_seconds(data_dir) - server_before, 2)}


def build(corpus: str, source: str, model: str, work: Path) -> dict:
    path, _, base_url = source.partition("@")
    data_dir = work / f"{corpus}-{model.replace(':', '-')}"
    env = {**os.environ, "NEOWEAVE_EMBEDDING_MODEL": model}
    cli = [PYTHON, "-m", "neoweave.cli", "--data-dir", str(data_dir)]
    extra = ["--base-url", base_url] if base_url else []
    ingest, ingest_time = timed([*cli, "ingest", path, *extra, "--no-progress", "--json"], env, data_dir)
    enrich, enrich_time = timed([*cli, "enrich", "kg", "--no-progress", "--json"], env, data_dir)
    chunks = int(ingest["chunks"])
    wall = ingest_time["wall"] + enrich_time["wall"]
    return {"corpus": corpus, "model": model, "data_dir": str(data_dir), "chunks": chunks,
            "ingest": {**ingest_time, **{k: ingest[k] for k in ("seconds", "embed_seconds", "documents_new",
                                                                  "links_resolved")}},
            "enrich": {**enrich_time, **{k: enrich[k] for k in ("seconds", "extract_seconds", "write_seconds",
                                                                  "finish_seconds", "phase_seconds")},
                       "entities": enrich["counters"].get("entities"),
                       "entities_embedded": enrich["counters"].get("entities_embedded")},
            "wall": round(wall, 1), "chunks_per_second": round(chunks / wall, 1)}


def open_store(data_dir: Path):
    sys.path.insert(0, str(ROOT))
    from neoweave.store.falkordb_server import EmbeddedFalkorDB
    from neoweave.store.falkordb_store import FalkorDBStore

    return FalkorDBStore(server=EmbeddedFalkorDB(data_dir))


def embedded_tokens(store, model: str) -> dict[str, int]:
    """Tokens the model read to build the graph (each text truncated at its limit, as embedded): chunks, link
    contexts (authored and inferred), entity names. Embedding costs about the same per token, so this is the
    floor that no pipeline change below the model can go under."""
    from neoweave.embeddings import Embedder

    embedder = Embedder(model)
    queries = {
        "chunks": "MATCH (c:Chunk) RETURN c.text AS text",
        "link_contexts": "MATCH ()-[l:LINKS_TO]->() WHERE l.context_embedding IS NOT NULL "
                         "RETURN DISTINCT l.context AS text",
        "entities": "MATCH (e:Entity) WHERE e.embedding IS NOT NULL RETURN DISTINCT e.name AS text",
    }
    tokens = {}
    for layer, cypher in queries.items():
        texts = [row["text"] or "" for row in store.query(cypher)]
        counts = embedder.count_tokens(texts)
        tokens[layer] = sum(min(n, embedder.max_tokens) for n in counts)
        tokens[f"{layer}_texts"] = len(texts)
    return tokens


def graph_memory(store) -> dict:
    """FalkorDB's own account of the graph's memory (`GRAPH.MEMORY USAGE`: attributes by label and relationship
    type, matrices, indexes) and the server's used memory (the vector indexes' HNSW graphs included), in MB."""
    store.query("RETURN 1")
    connection = store._db.connection  # the embedded server's redis connection
    reply = connection.execute_command("GRAPH.MEMORY", "USAGE", store.graph_name)
    usage = dict(zip(reply[::2], reply[1::2], strict=True))
    for key, value in usage.items():
        if isinstance(value, list):  # [name, mb, name, mb, ...]
            usage[key] = dict(zip(value[::2], value[1::2], strict=True))
    usage["server_used_memory_mb"] = round(connection.info("memory")["used_memory"] / 2**20)
    return usage


def stop_server(data_dir: str) -> None:
    subprocess.run([PYTHON, "-m", "neoweave.cli", "--data-dir", data_dir, "server", "stop"], cwd=ROOT,
                   capture_output=True)


def evaluate(result: dict, qa: str, work: Path) -> dict:
    path, _, qtype = qa.partition(":")
    out = work / f"eval-{Path(result['data_dir']).name}"
    env = {**os.environ, "NEOWEAVE_EMBEDDING_MODEL": result["model"]}
    command = [PYTHON, "-m", "neoweave.cli", "--data-dir", result["data_dir"], "eval", "--qa", path,
               "--strategies", STRATEGIES, "--k", "2,5,10", "--out", str(out)]
    subprocess.run(command + (["--type", qtype] if qtype else []), env=env, cwd=ROOT, check=True,
                   capture_output=True)
    rows = json.loads((out / "summary.json").read_text())["rows"]
    return {f"{r['strategy']}@{r['k']}": {m: round(r[m], 3) for m in ("hit", "perfect", "recall") if m in r}
            for r in rows if r["type"] == "all"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", action="append", required=True, help="NAME=PATH[@BASE_URL]")
    parser.add_argument("--model", action="append", help="embedding model (default all-MiniLM-L6-v2)")
    parser.add_argument("--eval", action="append", default=[], help="NAME=QA_FILE[:QUESTION_TYPE]")
    parser.add_argument("--work", type=Path, help="keep the graphs here")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    corpora = dict(item.split("=", 1) for item in args.corpus)
    questions = dict(item.split("=", 1) for item in args.eval)
    work = args.work or Path(tempfile.mkdtemp(prefix="neoweave-indexing-"))
    results = []
    for corpus, source in corpora.items():
        for model in args.model or ["all-MiniLM-L6-v2"]:
            result = build(corpus, source, model, work)
            store = open_store(Path(result["data_dir"]))
            try:
                result["tokens_embedded"] = embedded_tokens(store, model)
                result["memory_mb"] = graph_memory(store)
            finally:
                store.close()
            stop_server(result["data_dir"])
            if corpus in questions:
                result["retrieval"] = evaluate(result, questions[corpus], work)
                stop_server(result["data_dir"])
            print(json.dumps(result), flush=True)
            results.append(result)
    report = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
              "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
              "load_at_end": os.getloadavg(), "results": results}
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(report, indent=2) + "\n")
    if not args.work:
        import shutil

        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
