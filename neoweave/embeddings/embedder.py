"""`Embedder`: one embedding model behind one of two runtimes, chosen once per object and loaded on first use.

"onnx" (ONNX Runtime over an export of the model, no torch) starts a process in under a second and embeds at
least as fast; "torch" (sentence-transformers) runs any model on any device. "auto" takes onnx when
onnxruntime is installed and the model is exported, or can be exported now (torch installed: exported once,
into the cache, with a log line), else torch. Both give the same vectors (cosine >= 1 - 1e-4) and the same
token counts. Measurements: docs/benchmarks/embedder_runtime.md. A model named "NAME:int8" is NAME's int8
variant (`quantize`), on the onnx runtime only.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from neoweave.config import EmbeddingRuntime, EmbeddingSettings
from neoweave.embeddings.models import (
    KNOWN_DIMENSIONS,
    Pipeline,
    UnsupportedModel,
    model_directory,
    model_location,
    read_pipeline,
)
from neoweave.embeddings.quantize import int8_model, split_precision
from neoweave.errors import ConfigError
from neoweave.token_counting import wordpiece_counter

if TYPE_CHECKING:
    from neoweave.embeddings.onnx_runtime import OnnxRuntime
    from neoweave.embeddings.torch_runtime import TorchRuntime

log = logging.getLogger(__name__)

RUNTIMES: tuple[str, ...] = get_args(EmbeddingRuntime)
SETTING = "embedding.runtime (NEOWEAVE_EMBEDDING_RUNTIME)"
_EXPORT_LOCK = threading.Lock()


def resolve_dimension(settings: EmbeddingSettings) -> int:
    """The configured dimension, a known model's dimension, or the dimension the model itself reports."""
    if settings.dimension is not None:
        return settings.dimension
    return Embedder(settings.model, runtime=settings.runtime).dimension


@dataclass(frozen=True)
class _Choice:
    """The runtime an Embedder resolved to, with what loading it needs."""

    runtime: str
    directory: Path | None = None
    pipeline: Pipeline | None = None
    export: Path | None = None
    """The existing ONNX export (None with runtime onnx: it is exported when the model loads)."""


class Embedder:
    """An embedding model: batched, L2-normalised vectors and token counts; safe to share between threads."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", *, runtime: EmbeddingRuntime = "auto", batch_size: int = 32,
                 device: str = "cpu") -> None:
        if runtime not in RUNTIMES:
            raise ConfigError(f"unknown embedding runtime {runtime!r} in {SETTING}", hint=" | ".join(RUNTIMES))
        self.model_name = model
        """The model as the graph records it: the name, with ":int8" for the quantized variant."""
        self._base, self.precision = split_precision(model)
        self.runtime = runtime
        self.batch_size = batch_size
        self.device = device
        self._model: TorchRuntime | OnnxRuntime | None = None
        self._choice: _Choice | None = None
        self._counter: Callable[[list[str]], list[int]] | None = None
        self._counter_lock = threading.Lock()
        self._model_lock = threading.RLock()  # one model, shared by threads (a server's requests): one call at a time

    # -- which runtime ------------------------------------------------------------------------------------
    @property
    def runtime_name(self) -> str:
        """The runtime in use, "onnx" or "torch": the loaded one, or the one `runtime` resolves to (nothing is
        loaded to tell; in auto mode a failed ONNX load later falls back to torch)."""
        if self._model is not None:
            return self._model.name
        return self._resolve().runtime

    def _resolve(self) -> _Choice:
        with self._model_lock:
            if self._choice is None:
                self._choice = self._choose()
            return self._choice

    def _choose(self) -> _Choice:
        if self.runtime == "torch":
            if self.precision == "int8":
                raise ConfigError(f"embedding model '{self.model_name}' is an int8 variant, which runs on the onnx "
                                  f"runtime only, but {SETTING} is \"torch\"",
                                  hint=f'set embedding.runtime = "auto", or embedding.model = "{self._base}"')
            return _Choice("torch")
        choice, problem = self._onnx_choice()
        if problem is None:
            return choice
        if self.runtime == "onnx" or self.precision == "int8":
            needs = "is an int8 variant, which needs the onnx runtime" if self.precision == "int8" else \
                f'needs the onnx runtime ({SETTING} is "onnx")'
            raise ConfigError(f"embedding model '{self.model_name}' {needs}, but cannot run on it: {problem}",
                              hint=_ONNX_HINT.format(model=self._base))
        log.debug("embedding runtime for %s: torch (%s)", self.model_name, problem)
        return _Choice("torch", directory=choice.directory, pipeline=choice.pipeline)

    def _onnx_choice(self) -> tuple[_Choice, str | None]:
        """The ONNX choice, and what rules it out (None when nothing does)."""
        from neoweave.embeddings.onnx_export import export_path, exporter_missing, failed_export, find_export

        if self.device != "cpu":
            return _Choice("onnx"), f"the ONNX runtime runs on the CPU only (device {self.device!r})"
        directory = model_directory(self._base)
        if directory is None:
            return _Choice("onnx"), "its files are not on this machine (the torch runtime can download them)"
        try:
            pipeline = read_pipeline(directory)
        except UnsupportedModel as exc:
            return _Choice("onnx", directory), f"its pipeline has {exc}"
        choice = _Choice("onnx", directory, pipeline, find_export(self._base, directory))
        if importlib.util.find_spec("onnxruntime") is None:
            return choice, "onnxruntime is not installed (pip install onnxruntime)"
        if choice.export is None:
            failure = failed_export(self._base, directory)
            if failure is not None:
                return choice, f"its ONNX export failed before ({failure})"
            missing = exporter_missing()
            if missing is not None:
                return choice, (f"it is not exported ({export_path(self._base, directory)} is missing) and "
                                f"cannot be exported here ({missing} is not installed)")
        return choice, None

    # -- loading ------------------------------------------------------------------------------------------
    def _load(self) -> TorchRuntime | OnnxRuntime:
        """The loaded runtime (loading it on first use): `.encode(texts, batch_size)`, `.tokenizer`, ..."""
        with self._model_lock:
            if self._model is None:
                self._model = self._load_runtime(self._resolve())
            return self._model

    def load(self) -> Embedder:
        """Load the model now (a server or a timed benchmark loads before its first request)."""
        self._load()
        return self

    def _load_runtime(self, choice: _Choice) -> TorchRuntime | OnnxRuntime:
        if choice.runtime == "onnx":
            try:
                return self._load_onnx(choice)
            except Exception as exc:
                if self.runtime == "onnx" or self.precision == "int8":  # no torch fallback was asked for
                    if isinstance(exc, ConfigError):
                        raise
                    raise ConfigError(f"cannot load the ONNX export of '{self.model_name}': {exc}",
                                      hint=_ONNX_HINT.format(model=self._base)) from exc
                log.warning("embedding model %s: the ONNX runtime failed (%s); using torch", self.model_name, exc)
                self._choice = _Choice("torch", choice.directory, choice.pipeline)
        from neoweave.embeddings.torch_runtime import TorchRuntime

        return TorchRuntime(self._base, model_location(self._base), self.device)

    def _load_onnx(self, choice: _Choice) -> OnnxRuntime:
        from neoweave.embeddings.onnx_export import export, find_export
        from neoweave.embeddings.onnx_runtime import OnnxRuntime

        assert choice.pipeline is not None
        export_dir = choice.export
        if export_dir is None:
            with _EXPORT_LOCK:  # two embedders of one process export once
                export_dir = find_export(self._base, choice.directory)
                if export_dir is None:
                    log.warning("embedding model %s has no ONNX export yet: exporting it once now (~10 s; torch "
                                "is installed), later processes load it directly (scripts/setup.sh exports the "
                                "bundled model)", self._base)
                    export_dir = export(self._base)
            self._choice = _Choice("onnx", choice.directory, choice.pipeline, export_dir)
        model_file = int8_model(export_dir) if self.precision == "int8" else None
        return OnnxRuntime(export_dir, choice.pipeline, model_file=model_file)

    # -- what the model is ----------------------------------------------------------------------------------
    @property
    def dimension(self) -> int:
        """The vector size: known by name, or read from the model's config files; the model is loaded only when
        neither tells."""
        if self._model is not None:
            return self._model.dimension
        if self._base in KNOWN_DIMENSIONS:
            return KNOWN_DIMENSIONS[self._base]
        pipeline = self._pipeline()
        return pipeline.dimension if pipeline is not None else self._load().dimension

    @property
    def max_tokens(self) -> int:
        """Tokens the model reads of a text (longer texts are truncated when embedded)."""
        if self._model is not None:
            return self._model.max_seq_length
        pipeline = self._pipeline()
        return pipeline.max_seq_length if pipeline is not None else self._load().max_seq_length

    def _pipeline(self) -> Pipeline | None:
        """The model's pipeline as its files describe it, if they are here and the ONNX runtime could run it
        (then the torch runtime reports the same dimension and sequence length)."""
        try:
            choice = self._resolve()
        except ConfigError:
            return None
        if choice.pipeline is not None or choice.runtime == "onnx":
            return choice.pipeline
        directory = model_directory(self._base)
        try:
            return read_pipeline(directory) if directory is not None else None
        except UnsupportedModel:
            return None

    # -- embedding and counting -----------------------------------------------------------------------------
    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order. A text repeated in the call is embedded once (a quarter
        of the inferred links' contexts on the Python docs repeat one another)."""
        if not texts:
            return []
        unique = list(dict.fromkeys(texts))
        with self._model_lock:  # the fast tokenizer fails with "Already borrowed" when two threads share it
            vectors = self._load().encode(unique, self.batch_size)
        if len(unique) < len(texts):
            row = {text: i for i, text in enumerate(unique)}
            vectors = vectors[[row[text] for text in texts]]
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, with one tokenizer copy kept for the purpose (copying one costs ~50 ms)."""
        with self._counter_lock:
            if self._counter is None:
                self._counter = self.token_counter()
            return self._counter(texts)

    def token_counter(self) -> Callable[[list[str]], list[int]]:
        """A function counting tokens per text as the model sees them (before truncation to `max_tokens`).

        It uses its own copy of the Rust tokenizer (the same one in both runtimes, so the counts are too), so it
        can run in another thread while `embed` runs (a fast tokenizer shared across threads fails with "Already
        borrowed"). With an ONNX export on disk, counting loads no model at all.
        """
        backend = self._counting_tokenizer()
        if backend is None:
            runtime = self._load()
            assert hasattr(runtime, "python_counter")
            return runtime.python_counter()
        backend.no_truncation()
        backend.no_padding()

        def count_encoded(texts: list[str]) -> list[int]:
            return [len(encoding.ids) for encoding in backend.encode_batch(texts, add_special_tokens=True)]

        return wordpiece_counter(backend, count_encoded) or count_encoded

    def _counting_tokenizer(self) -> Any:
        with self._model_lock:
            if self._model is not None:
                return self._model.counting_tokenizer()
            choice = self._resolve()
            if choice.runtime == "onnx" and choice.export is not None:
                from neoweave.embeddings.onnx_runtime import load_tokenizer

                return load_tokenizer(choice.export)
            return self._load().counting_tokenizer()


_ONNX_HINT = ('set embedding.runtime = "auto" or "torch", or export the model where torch is installed: '
              "python -m neoweave.embeddings.onnx_export {model}")
