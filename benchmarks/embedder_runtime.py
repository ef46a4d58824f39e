"""Embedder runtimes, ONNX Runtime against sentence-transformers (torch): cold start and throughput.

    python benchmarks/embedder_runtime.py [--repeats 5] [--throughput-repeats 3] \
        [--corpus /work/shared/data/hotpotqa/corpus.jsonl] [--records 512]

Every measurement runs in a fresh interpreter, repeated (variants interleaved, so drift of a shared machine
spreads over all of them); the report gives median, min and max.

- cold start: process start to the first query vector, `python -c` importing neoweave.embeddings, loading the
  model and embedding one question (what `neoweave query` pays before it retrieves), per runtime; also with
  the process exit, and the bare interpreter for reference. The phases are stamped inside the child.
- throughput: chunks/s embedding the chunks of the first `--records` records of the corpus (split as ingest
  splits text, 1000 characters with 150 overlap) at batch size 32, after one warm-up batch; torch, and ONNX
  Runtime with its graph optimisations off, at its default level (all), and on a graph fused offline by
  onnxruntime.transformers' BERT optimizer (when it imports).

Writes docs/benchmarks/embedder_runtime.json and .md (tables, machine, load average, the command);
`--report-only` rewrites the .md from the .json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

MODEL = "all-MiniLM-L6-v2"
QUESTION = "Which magazine was started first, Arthur's Magazine or First for Women?"
BATCH = 32
OUT = ROOT / "docs" / "benchmarks" / "embedder_runtime"

COLD = {
    "python (bare interpreter)": "import time, json; print(json.dumps({'ready': time.time()}))",
    "onnx": "runtime = 'onnx'",
    "torch": "runtime = 'torch'",
}
COLD_CODE = """
import time, json
started = time.time()
from neoweave.embeddings import Embedder
imported = time.time()
embedder = Embedder({model!r}, runtime=runtime).load()
loaded = time.time()
vector = embedder.embed_query({question!r})
print(json.dumps({{"started": started, "imported": imported, "loaded": loaded, "ready": time.time(),
                  "runtime": embedder.runtime_name, "dimension": len(vector)}}))
"""

THROUGHPUT = {
    "torch (sentence-transformers)": "torch",
    "onnx, graph optimisations off": "disable",
    "onnx, graph optimisations all (default)": "all",
    "onnx, BERT-fused offline + all": "fused",
}
THROUGHPUT_CODE = """
import json, time
from neoweave.embeddings.models import model_directory, model_location, read_pipeline
texts = json.load(open({chunks!r}))
variant = {variant!r}
if variant == "torch":
    from neoweave.embeddings.torch_runtime import TorchRuntime
    runtime = TorchRuntime({model!r}, model_location({model!r}), "cpu")
else:
    from neoweave.embeddings.onnx_runtime import OnnxRuntime
    export = {fused!r} if variant == "fused" else {export!r}
    runtime = OnnxRuntime(__import__("pathlib").Path(export), read_pipeline(model_directory({model!r})),
                          optimization="all" if variant == "fused" else variant)
runtime.encode(texts[:{batch}], {batch}).tolist()  # warm-up batch
started = time.perf_counter()
vectors = runtime.encode(texts, {batch}).tolist()
elapsed = time.perf_counter() - started
print(json.dumps({{"seconds": elapsed, "chunks_per_s": len(texts) / elapsed, "vectors": len(vectors)}}))
"""


def spread(values: list[float]) -> dict[str, Any]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "runs": [round(v, 4) for v in values]}


def run_child(code: str) -> tuple[dict[str, Any], float, float]:
    """(the child's JSON line, the spawn time, the wall time to exit)."""
    spawned = time.time()
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    wall = time.time() - spawned
    if result.returncode != 0:
        raise RuntimeError(f"child failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1]), spawned, wall


def chunks_of(corpus: Path, records: int) -> list[str]:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=150, strip_whitespace=True)
    chunks: list[str] = []
    with corpus.open(encoding="utf-8") as handle:
        for _, line in zip(range(records), handle, strict=False):
            record = json.loads(line)
            chunks += splitter.split_text(f"{record['title']}\n\n{record['text']}")
    return chunks


def fuse(export: Path, workdir: Path) -> Path | None:
    """A copy of the export with its graph fused by onnxruntime.transformers (Attention, SkipLayerNorm, ...)."""
    try:
        from onnxruntime.transformers import optimizer
    except ImportError:
        return None
    config = json.loads((Path(json.loads((export / "neoweave-onnx.json").read_text())["source"])
                         / "config.json").read_text())
    target = workdir / "fused"
    shutil.copytree(export, target)
    model = optimizer.optimize_model(str(export / "model.onnx"), model_type="bert",
                                     num_heads=config["num_attention_heads"], hidden_size=config["hidden_size"],
                                     opt_level=0)
    model.save_model_to_file(str(target / "model.onnx"))
    return target


def import_breakdown() -> list[tuple[str, float]]:
    """The packages `import torch, sentence_transformers` spends most on (python -X importtime: each package's
    first import, cumulative, so a package imported by another is inside that one's time too), in s."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-c", "import torch, sentence_transformers"],
                            capture_output=True, text=True, check=True)
    rows = []
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[1].strip().isdigit() and "." not in parts[2]:
            rows.append((parts[2].strip(), int(parts[1]) / 1e6))
    return sorted(rows, key=lambda row: -row[1])[:10]


def machine() -> dict[str, Any]:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    return {"cpu": cpu, "cores": os.cpu_count(), "cores_usable": len(os.sched_getaffinity(0)),
            "python": platform.python_version()}


def versions() -> dict[str, str | None]:
    import importlib.metadata

    found = {}
    for package in ("torch", "sentence-transformers", "transformers", "onnxruntime", "tokenizers", "numpy"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            found[package] = None
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=Path("/work/shared/data/hotpotqa/corpus.jsonl"))
    parser.add_argument("--records", type=int, default=512)
    parser.add_argument("--repeats", type=int, default=5, help="cold starts per runtime")
    parser.add_argument("--throughput-repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT, help="writes OUT.json and OUT.md")
    parser.add_argument("--report-only", action="store_true", help="rewrite OUT.md from OUT.json, measuring nothing")
    args = parser.parse_args()
    if args.report_only:
        result = json.loads(args.out.with_suffix(".json").read_text(encoding="utf-8"))
        args.out.with_suffix(".md").write_text(report(result), encoding="utf-8")
        return

    from neoweave.embeddings.onnx_export import export

    loadavg_before = Path("/proc/loadavg").read_text().split()[:3]
    exported = export(MODEL)
    chunks = chunks_of(args.corpus, args.records)
    with tempfile.TemporaryDirectory() as workdir:
        chunk_file = Path(workdir) / "chunks.json"
        chunk_file.write_text(json.dumps(chunks), encoding="utf-8")
        fused = fuse(exported, Path(workdir))

        cold: dict[str, dict[str, list[float]]] = {name: {} for name in COLD}
        for _ in range(args.repeats):
            for name, setup in COLD.items():
                code = setup if name.startswith("python") else setup + COLD_CODE.format(model=MODEL,
                                                                                           question=QUESTION)
                stamps, spawned, wall = run_child(code)
                phases = {"to first vector": stamps["ready"] - spawned, "with process exit": wall}
                if "started" in stamps:
                    phases |= {"interpreter start": stamps["started"] - spawned,
                               "import neoweave.embeddings": stamps["imported"] - stamps["started"],
                               "load model (imports included)": stamps["loaded"] - stamps["imported"],
                               "embed the question": stamps["ready"] - stamps["loaded"]}
                for phase, seconds in phases.items():
                    cold[name].setdefault(phase, []).append(seconds)
                print(f"cold {name}: {phases['to first vector']:.2f} s", file=sys.stderr)

        throughput: dict[str, list[float]] = {name: [] for name, v in THROUGHPUT.items() if v != "fused" or fused}
        for _ in range(args.throughput_repeats):
            for name in throughput:
                code = THROUGHPUT_CODE.format(chunks=str(chunk_file), variant=THROUGHPUT[name], model=MODEL,
                                              export=str(exported), fused=str(fused), batch=BATCH)
                stamps, _, _ = run_child(code)
                throughput[name].append(stamps["chunks_per_s"])
                print(f"throughput {name}: {stamps['chunks_per_s']:.1f} chunks/s", file=sys.stderr)

    from neoweave.embeddings import Embedder

    counts = Embedder(MODEL).count_tokens(chunks)
    result = {
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
        "command": "python benchmarks/embedder_runtime.py " + " ".join(sys.argv[1:]),
        "machine": machine(), "versions": versions(),
        "loadavg_before": loadavg_before, "loadavg_after": Path("/proc/loadavg").read_text().split()[:3],
        "model": MODEL, "export": str(exported), "batch_size": BATCH,
        "corpus": str(args.corpus), "records": args.records, "chunks": len(chunks),
        "tokens_per_chunk": {"median": statistics.median(counts), "max": max(counts),
                             "truncated_at_256": sum(c > 256 for c in counts)},
        "cold_start_s": {name: {phase: spread(values) for phase, values in phases.items()}
                         for name, phases in cold.items()},
        "throughput_chunks_per_s": {name: spread(values) for name, values in throughput.items()},
        "torch_import_breakdown_s": import_breakdown(),
    }
    args.out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    args.out.with_suffix(".md").write_text(report(result), encoding="utf-8")
    print(report(result))


def report(r: dict[str, Any]) -> str:
    def cell(s: dict[str, Any], digits: int = 2) -> str:
        return f"{s['median']:.{digits}f} ({s['min']:.{digits}f}-{s['max']:.{digits}f})"

    cold = r["cold_start_s"]
    lines = [
        "# Embedder runtime: ONNX Runtime against sentence-transformers (torch)",
        "",
        f"Reproduce: `{r['command'].strip()}` (writes this file and embedder_runtime.json).",
        "",
        f"Machine: {r['machine']['cpu']}, {r['machine']['cores']} cores ({r['machine']['cores_usable']} usable), "
        f"Python {r['machine']['python']}; {r['date']}. Load average (1/5/15 min) before "
        f"{' '.join(r['loadavg_before'])}, after {' '.join(r['loadavg_after'])}.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in r["versions"].items()) + ".",
        "",
        f"Model {r['model']} (bundled), batch size {r['batch_size']}. Each number is a fresh process; median "
        "(min-max).",
        "",
        "## Cold start: process start to the first query vector (s)",
        "",
        "| runtime | to first vector | with process exit | interpreter start | import neoweave.embeddings "
        "| load model (imports included) | embed the question |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for name, phases in cold.items():
        row = [name] + [cell(phases[p]) if p in phases else "" for p in
                        ("to first vector", "with process exit", "interpreter start", "import neoweave.embeddings",
                         "load model (imports included)", "embed the question")]
        lines.append("| " + " | ".join(row) + " |")
    tokens = r["tokens_per_chunk"]
    lines += [
        "",
        f"## Throughput: {r['chunks']} chunks of the first {r['records']} HotpotQA records (chunks/s)",
        "",
        f"Chunks split as ingest splits text (1000 characters, 150 overlap): median {tokens['median']} tokens, "
        f"max {tokens['max']}, {tokens['truncated_at_256']} truncated at 256. One warm-up batch, then all "
        "chunks in one call.",
        "",
        "| runtime | chunks/s |",
        "| --- | --- |",
    ]
    for name, values in r["throughput_chunks_per_s"].items():
        lines.append(f"| {name} | {cell(values, 1)} |")
    lines += [
        "",
        "## Where the torch cold start goes",
        "",
        "`python -X importtime -c \"import torch, sentence_transformers\"`: the packages it spends most on "
        "(each package's first import, cumulative: nested packages count in their importer too; importtime's "
        "own overhead included):",
        "",
        "| module | s |",
        "| --- | --- |",
    ]
    lines += [f"| {name} | {seconds:.2f} |" for name, seconds in r["torch_import_breakdown_s"]]
    throughput = r["throughput_chunks_per_s"]
    torch_rate = throughput["torch (sentence-transformers)"]
    onnx_rate = throughput["onnx, graph optimisations all (default)"]
    onnx_cold, torch_cold = cold["onnx"]["to first vector"]["median"], cold["torch"]["to first vector"]["median"]
    as_fast = onnx_rate["median"] >= torch_rate["median"]
    levels = [v for k, v in throughput.items() if k.startswith("onnx")]
    overlap = max(v["min"] for v in levels) <= min(v["max"] for v in levels)
    lines += [
        "",
        "## Result",
        "",
        f"ONNX Runtime reaches the first query vector in {onnx_cold:.2f} s against {torch_cold:.2f} s "
        f"({torch_cold / onnx_cold:.1f}x faster) and embeds {onnx_rate['median']:.1f} chunks/s against "
        f"{torch_rate['median']:.1f} ({onnx_rate['median'] / torch_rate['median']:.2f}x). The graph optimisation "
        "levels " + ("overlap within their min-max ranges" if overlap else "differ beyond their min-max ranges")
        + " on this model.",
        "",
        "Decision: " + (
            '`embedding.runtime = "auto"` resolves to onnx wherever onnxruntime is installed and the model is '
            "exported (scripts/setup.sh exports the bundled model), for queries and ingest alike; torch stays "
            "for models the ONNX runtime does not reproduce, other devices, and as the fallback."
            if as_fast else
            "onnx for queries (cold start) but torch for ingest: ONNX Runtime is slower in throughput here."),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
