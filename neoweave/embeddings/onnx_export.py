"""Export a sentence-transformers model's transformer to ONNX, once, into a cache keyed by the model files.

    python -m neoweave.embeddings.onnx_export [MODEL] [--force]

The export holds the transformer graph (inputs input_ids / attention_mask / token_type_ids, dynamic batch and
sequence axes, output the token embeddings), the Rust tokenizer sentence-transformers used, and a JSON record
of versions and the check it passed: vectors from the graph, pooled in numpy, against sentence-transformers'
own on varied texts. Pooling and normalisation stay outside the graph (`onnx_runtime` reads the model's pooling
config), so the graph is the plain transformer. Needs torch, sentence-transformers and onnx (torch's exporter
writes through it); reading an export needs only onnxruntime. Exports are written to a temporary directory
renamed into place, so a reader never sees half an export and two exporters never clobber each other.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.metadata
import importlib.util
import json
import logging
import os
import re
import shutil
import tempfile
import time
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from neoweave.embeddings.models import Pipeline, UnsupportedModel, model_directory, model_identity, read_pipeline
from neoweave.embeddings.onnx_runtime import META_FILE, MODEL_FILE, TOKENIZER_FILE
from neoweave.errors import ConfigError
from neoweave.user_cache import user_cache

log = logging.getLogger("neoweave.embeddings.onnx_export")  # also when run as __main__

FORMAT = 1
"""The export layout's version, part of the cache key: a change to what is exported makes old exports unused."""
OPSET = 17
ATTENTION = "eager"
"""The attention implementation traced into the graph: eager attention is the plain MatMul/Softmax pattern
ONNX Runtime's fusions recognise (the SDPA one traces to a larger graph)."""
MIN_COSINE = 1 - 1e-4
"""The least cosine between an exported vector and sentence-transformers' for the export to be kept."""
CHECK_TEXTS = (
    "q",
    "",
    "How do I cancel a running task?",
    "Ünïcödé naïve café — 日本語のテキスト and emoji 🙂",
    "def f(x):\n    return os.path.join(x, 'y')  # code",
    "   leading and trailing whitespace   ",
    "The quick brown fox jumps over the lazy dog. " * 40,  # past max_seq_length: truncated
    "Edvard Munch painted The Scream in 1893.",
)


def cache_root() -> Path:
    """`$XDG_CACHE_HOME/neoweave/onnx` (default ~/.cache/neoweave/onnx)."""
    return user_cache("onnx")


def export_path(model: str, directory: Path) -> Path:
    """Where the export of the model files in `directory` lives (whether or not it exists yet)."""
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", model).strip("_.")[-60:] or "model"
    return cache_root() / f"{slug}-{model_identity(directory)}-f{FORMAT}"


def find_export(model: str, directory: Path | None = None) -> Path | None:
    """The complete export of `model`'s current files, or None."""
    directory = directory or model_directory(model)
    if directory is None:
        return None
    path = export_path(model, directory)
    return path if (path / META_FILE).is_file() else None


def failed_export(model: str, directory: Path) -> str | None:
    """Why the last export of these model files failed, or None (auto mode does not retry on every start;
    `python -m neoweave.embeddings.onnx_export MODEL` does)."""
    marker = _marker(export_path(model, directory))
    try:
        return marker.read_text(encoding="utf-8").strip() or "unknown reason"
    except OSError:
        return None


def _marker(target: Path) -> Path:
    return target.with_name(target.name + ".failed")


def exporter_missing() -> str | None:
    """Which package an export needs but is not installed, or None."""
    for module, package in (("torch", "torch"), ("sentence_transformers", "sentence-transformers"),
                            ("onnx", "onnx")):
        if importlib.util.find_spec(module) is None:
            return package
    return None


def export(model: str, *, force: bool = False) -> Path:
    """Export `model` unless its current files are exported already; returns the export's directory."""
    directory = model_directory(model)
    if directory is None:
        raise ConfigError(f"the files of embedding model '{model}' are not on this machine",
                          hint="load it once with the torch runtime (which downloads it), or give a local path")
    try:
        pipeline = read_pipeline(directory)
    except UnsupportedModel as exc:
        raise ConfigError(f"embedding model '{model}' cannot run on ONNX Runtime: {exc}",
                          hint='set embedding.runtime = "torch"') from exc
    target = export_path(model, directory)
    if not force and (target / META_FILE).is_file():
        return target
    missing = exporter_missing()
    if missing is not None:
        raise ConfigError(f"exporting '{model}' to ONNX needs {missing}",
                          hint="pip install 'neoweave[embed]' (after pip install torch==2.13.0)")
    target.parent.mkdir(parents=True, exist_ok=True)
    marker = _marker(target)
    work = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    started = time.perf_counter()
    try:
        meta = _export_into(work, model, directory, pipeline)
    except BaseException as exc:
        shutil.rmtree(work, ignore_errors=True)  # an interrupted export leaves no 90 MB behind either
        if not isinstance(exc, Exception):
            raise
        _write_atomically(marker, f"{type(exc).__name__}: {exc}\n")
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"exporting embedding model '{model}' to ONNX failed: {exc}",
                          hint='set embedding.runtime = "torch"') from exc
    _install(work, target, force=force)
    marker.unlink(missing_ok=True)
    log.info("exported %s to ONNX in %.1f s: %s (least cosine to sentence-transformers: %s)", model,
             time.perf_counter() - started, target, meta["check"]["min_cosine"])
    return target


def _export_into(work: Path, model: str, directory: Path, pipeline: Pipeline) -> dict[str, Any]:
    """Write the graph, the tokenizer and the record into `work`, after checking the graph's vectors."""
    import torch
    from sentence_transformers import SentenceTransformer

    from neoweave.embeddings.torch_runtime import quiet_weight_loading

    with quiet_weight_loading():
        reference = SentenceTransformer(str(directory), device="cpu")
        traced = SentenceTransformer(str(directory), device="cpu", model_kwargs={"attn_implementation": ATTENTION})
    if int(reference.max_seq_length) != pipeline.max_seq_length:
        raise UnsupportedModel(f"max_seq_length {reference.max_seq_length} loaded, {pipeline.max_seq_length} read")
    transformer = traced[0]
    tokenizer = transformer.tokenizer
    inputs = [name for name in ("input_ids", "attention_mask", "token_type_ids")
              if name in tokenizer.model_input_names]
    sample = tokenizer(["An example sentence to trace the model with.", "Short"], padding=True, return_tensors="pt")

    class TokenEmbeddings(torch.nn.Module):
        """The transformer with named tensor inputs and one output (the tracer wants tensors, not dicts)."""

        def __init__(self, wrapped: torch.nn.Module) -> None:
            super().__init__()
            self.wrapped = wrapped

        def forward(self, *tensors: torch.Tensor) -> torch.Tensor:
            return self.wrapped(**dict(zip(inputs, tensors, strict=True)), return_dict=True).last_hidden_state

    axes = {name: {0: "batch", 1: "sequence"} for name in [*inputs, "token_embeddings"]}
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation notice and tracer warnings
        torch.onnx.export(TokenEmbeddings(transformer.auto_model).eval(), tuple(sample[name] for name in inputs),
                          str(work / MODEL_FILE), dynamo=False, input_names=inputs,
                          output_names=["token_embeddings"], dynamic_axes=axes, opset_version=OPSET,
                          do_constant_folding=True)

    backend = tokenizer.backend_tokenizer.__class__.from_str(tokenizer.backend_tokenizer.to_str())
    backend.no_truncation()
    backend.no_padding()
    backend.save(str(work / TOKENIZER_FILE))
    meta: dict[str, Any] = {
        "format": FORMAT, "model": model, "source": str(directory), "identity": model_identity(directory),
        "inputs": inputs, "output": "token_embeddings", "opset": OPSET, "exporter": "torch.onnx (TorchScript)",
        "attention": ATTENTION, "max_seq_length": pipeline.max_seq_length, "pooling": list(pipeline.pooling),
        "dimension": pipeline.dimension, "pad_token_id": tokenizer.pad_token_id or 0,
        "versions": {package: _version(package) for package in
                     ("torch", "transformers", "sentence-transformers", "onnx", "onnxruntime", "tokenizers")},
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    meta["check"] = _check(work, meta, pipeline, reference)
    (work / META_FILE).write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    return meta


def _check(work: Path, meta: dict[str, Any], pipeline: Pipeline, reference: Any) -> dict[str, Any]:
    """The least cosine between the export's vectors and sentence-transformers' on `CHECK_TEXTS`, one text at
    a time and as one padded batch; raises when it is below `MIN_COSINE`."""
    texts = list(CHECK_TEXTS)
    expected = reference.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    if importlib.util.find_spec("onnxruntime") is None:
        log.warning("onnxruntime is not installed: the ONNX export is not checked against sentence-transformers")
        return {"texts": len(texts), "min_cosine": None}
    from neoweave.embeddings.onnx_runtime import OnnxRuntime

    (work / META_FILE).write_text(json.dumps(meta), encoding="utf-8")  # the runtime reads it
    runtime = OnnxRuntime(work, pipeline)
    batched = runtime.encode(texts, batch_size=len(texts))
    single = np.concatenate([runtime.encode([text], batch_size=1) for text in texts])
    if batched.shape != expected.shape:
        raise ConfigError(f"the ONNX export gives vectors of shape {batched.shape}, sentence-transformers "
                          f"{expected.shape}")
    least = float(min((batched * expected).sum(axis=1).min(), (single * expected).sum(axis=1).min()))
    if not least >= MIN_COSINE:
        raise ConfigError(f"the ONNX export's vectors differ from sentence-transformers' (least cosine {least:.6f} "
                          f"< {MIN_COSINE})", hint='set embedding.runtime = "torch"')
    return {"texts": len(texts), "min_cosine": least}


def _install(work: Path, target: Path, *, force: bool) -> None:
    """Rename the finished export into place; if another process got there first, keep theirs."""
    if force and target.exists():
        retired = target.with_name(f".{target.name}.old-{os.getpid()}")
        with contextlib.suppress(OSError):
            target.rename(retired)
            shutil.rmtree(retired, ignore_errors=True)
    try:
        work.rename(target)
    except OSError:
        if not (target / META_FILE).is_file():
            raise
        shutil.rmtree(work, ignore_errors=True)  # a concurrent export finished first: the same files


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


@contextlib.contextmanager
def _logging_to_stderr() -> Iterator[None]:
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    package_log = logging.getLogger("neoweave")
    previous = package_log.level
    package_log.addHandler(handler)
    package_log.setLevel(logging.INFO)
    try:
        yield
    finally:
        package_log.removeHandler(handler)
        package_log.setLevel(previous)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m neoweave.embeddings.onnx_export",
                                     description="Export an embedding model to ONNX (once; idempotent).")
    parser.add_argument("model", nargs="?", default="all-MiniLM-L6-v2",
                        help="model name or path (default: the bundled all-MiniLM-L6-v2)")
    parser.add_argument("--force", action="store_true", help="export again even if an export exists")
    args = parser.parse_args(argv)
    with _logging_to_stderr():
        directory = model_directory(args.model)
        existing = None if args.force or directory is None else find_export(args.model, directory)
        try:
            path = existing or export(args.model, force=args.force)
        except ConfigError as exc:
            log.error("error: %s", exc)
            return 1
        if existing:
            log.info("%s is exported already: %s", args.model, path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
