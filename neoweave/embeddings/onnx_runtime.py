"""The ONNX Runtime embedder: the exported transformer, the Rust tokenizer, and pooling and L2 normalisation in
numpy. No torch: a process starts, loads the model and embeds a question in well under a second, where
importing torch and sentence-transformers alone takes ~8 s (docs/benchmarks/embedder_runtime.md)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from neoweave.embeddings.models import Pipeline

if TYPE_CHECKING:
    from tokenizers import Tokenizer

MODEL_FILE = "model.onnx"
TOKENIZER_FILE = "tokenizer.json"
META_FILE = "neoweave-onnx.json"

Optimization = Literal["disable", "basic", "extended", "all"]
DEFAULT_OPTIMIZATION: Optimization = "all"
"""ONNX Runtime's graph optimisation level for the session (its own default: measured in the benchmark)."""


def available_cores() -> int:
    """The CPUs this process may run on (its affinity mask, and a cgroup quota when one is set)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    with contextlib.suppress(OSError, ValueError):
        quota, period = Path("/sys/fs/cgroup/cpu.max").read_text().split()[:2]
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) / int(period))))
    return max(1, cores)


def load_tokenizer(export_dir: Path) -> Tokenizer:
    """The exported model's tokenizer (the very one sentence-transformers used), without truncation or
    padding: counts from it equal the torch runtime's."""
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(export_dir / TOKENIZER_FILE))
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return tokenizer


class OnnxRuntime:
    """One ONNX Runtime session over an export (see `onnx_export`). Not thread-safe: `Embedder` holds a lock."""

    name = "onnx"

    def __init__(self, export_dir: Path, pipeline: Pipeline, *, threads: int | None = None,
                 optimization: Optimization = DEFAULT_OPTIMIZATION, model_file: Path | None = None) -> None:
        """`model_file`: another graph of the same export (its int8 variant); default the export's own."""
        import onnxruntime as ort

        self.export_dir = export_dir
        self.pipeline = pipeline
        self.meta: dict[str, Any] = json.loads((export_dir / META_FILE).read_text(encoding="utf-8"))
        self._tokenizer = load_tokenizer(export_dir)
        # truncation as sentence-transformers asks of its tokenizer: longest_first at max_seq_length, special
        # tokens included, on the tokenizer's truncation side
        self._tokenizer.enable_truncation(pipeline.max_seq_length, strategy="longest_first",
                                          direction=pipeline.truncation_side)
        self._pad_id = int(self.meta.get("pad_token_id") or 0)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or available_cores()
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = {
            "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
            "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
            "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
            "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
        }[optimization]
        options.log_severity_level = 3  # errors only: its warnings would land on every command's stderr
        self.session = ort.InferenceSession(str(model_file or export_dir / MODEL_FILE), options,
                                            providers=["CPUExecutionProvider"])
        self._inputs = [i.name for i in self.session.get_inputs()]
        self._output = self.session.get_outputs()[0].name
        self._transformers_tokenizer: Any = None

    @property
    def dimension(self) -> int:
        return self.pipeline.dimension

    @property
    def max_seq_length(self) -> int:
        return self.pipeline.max_seq_length

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text. Texts are batched by token length (longest
        first, as sentence-transformers batches them) so a batch pads little."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.pipeline.do_lower_case:
            texts = [text.lower() for text in texts]
        encodings = self._tokenizer.encode_batch(texts, add_special_tokens=True)
        lengths = np.fromiter((len(e.ids) for e in encodings), dtype=np.int64, count=len(encodings))
        order = np.argsort(-lengths, kind="stable")
        vectors = np.empty((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            rows = order[start:start + batch_size]
            width = int(lengths[rows].max())
            ids = np.full((len(rows), width), self._pad_id, dtype=np.int64)
            mask = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros((len(rows), width), dtype=np.int64)
            for row, index in enumerate(rows):
                encoding = encodings[index]
                n = len(encoding.ids)
                ids[row, :n] = encoding.ids
                mask[row, :n] = 1
                types[row, :n] = encoding.type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            hidden = self.session.run([self._output], {name: feeds[name] for name in self._inputs})[0]
            vectors[rows] = normalize(pool(hidden, mask, self.pipeline.pooling))
        return vectors

    def counting_tokenizer(self) -> Tokenizer:
        """A fresh tokenizer copy for counting (it may run in another thread while `encode` runs)."""
        return load_tokenizer(self.export_dir)

    @property
    def tokenizer(self) -> Any:
        """The model's own transformers tokenizer, for code written against the torch runtime
        (`embedder._load().tokenizer`); loaded on first use, and only then is transformers imported."""
        if self._transformers_tokenizer is None:
            from transformers import AutoTokenizer

            self._transformers_tokenizer = AutoTokenizer.from_pretrained(str(self.pipeline.directory))
            self._transformers_tokenizer.model_max_length = self.max_seq_length
        return self._transformers_tokenizer


def pool(hidden: np.ndarray, mask: np.ndarray, modes: tuple[str, ...]) -> np.ndarray:
    """Sentence vectors from token vectors (batch, tokens, dim) over the attention mask, as sentence-transformers'
    Pooling module computes them; several modes are concatenated in the given order."""
    weights = mask.astype(hidden.dtype)
    parts = []
    for mode in modes:
        if mode == "cls":
            parts.append(hidden[np.arange(len(hidden)), mask.argmax(axis=1)])
        elif mode == "max":
            parts.append(np.where(weights[..., None] > 0, hidden, -np.inf).max(axis=1))
        else:  # mean, mean_sqrt_len_tokens
            total = np.matmul(weights[:, None, :], hidden)[:, 0, :]
            count = np.maximum(weights.sum(axis=1, keepdims=True), 1e-9)
            parts.append(total / (count if mode == "mean" else np.sqrt(count)))
    return parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)


def normalize(vectors: np.ndarray) -> np.ndarray:
    """Unit length per row (a zero row stays zero), as torch.nn.functional.normalize."""
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
