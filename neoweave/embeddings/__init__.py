"""Text embeddings: which model and dimension a graph's vectors come from, and the runtime that computes them.

`Embedder` is the entry point; `models` reads a model's identity and pipeline from its files; `torch_runtime`
(sentence-transformers) and `onnx_runtime` (ONNX Runtime, no torch) compute vectors; `onnx_export` writes the
export the ONNX runtime loads. Importing this package imports neither torch nor onnxruntime.
"""

from __future__ import annotations

from neoweave.embeddings.embedder import RUNTIMES, Embedder, resolve_dimension
from neoweave.embeddings.models import BUNDLED_MODELS, KNOWN_DIMENSIONS, model_directory, model_location

__all__ = ["BUNDLED_MODELS", "KNOWN_DIMENSIONS", "RUNTIMES", "Embedder", "model_directory", "model_location",
           "resolve_dimension"]
