"""The sentence-transformers (PyTorch) embedder: any model sentence-transformers loads, on any device. Importing
it costs ~8 s on two cores (torch, transformers, scikit-learn), so queries use the ONNX runtime when they can."""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from neoweave.errors import ConfigError

if TYPE_CHECKING:
    from tokenizers import Tokenizer


class TorchRuntime:
    """A loaded `SentenceTransformer`. Not thread-safe: `Embedder` holds a lock."""

    name = "torch"

    def __init__(self, model_name: str, location: str, device: str) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError("embeddings need sentence-transformers",
                              hint="pip install 'neoweave[embed]' (after pip install torch==2.13.0)") from exc
        try:
            with quiet_weight_loading():
                self.model = SentenceTransformer(location, device=device)
        except Exception as exc:
            raise ConfigError(f"cannot load embedding model '{model_name}' from {location}: {exc}",
                              hint="set embedding.model to an installed model name or a local path") from exc

    @property
    def dimension(self) -> int:
        getter = (getattr(self.model, "get_embedding_dimension", None)
                  or self.model.get_sentence_embedding_dimension)
        return int(getter())

    @property
    def max_seq_length(self) -> int:
        return int(self.model.max_seq_length)

    @property
    def tokenizer(self) -> Any:
        """The transformers tokenizer sentence-transformers calls."""
        return self.model.tokenizer

    def encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        """L2-normalised float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return self.model.encode(texts, batch_size=batch_size, normalize_embeddings=True, convert_to_numpy=True,
                                 show_progress_bar=False)

    def counting_tokenizer(self) -> Tokenizer | None:
        """A copy of the Rust tokenizer behind the transformers one (None for a slow, Python-only tokenizer):
        counting through it directly skips the transformers wrapper (~0.7 ms of kg's ~1.8 ms for 15 facts)."""
        backend = getattr(self.model.tokenizer, "backend_tokenizer", None)
        return copy.deepcopy(backend) if backend is not None else None

    def python_counter(self) -> Callable[[list[str]], list[int]]:
        """Token counts through a copy of the transformers tokenizer, for models without a Rust one."""
        tokenizer = copy.deepcopy(self.model.tokenizer)

        def count(texts: list[str]) -> list[int]:
            encoded = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
            return [len(ids) for ids in encoded]

        return count


@contextlib.contextmanager
def quiet_weight_loading() -> Iterator[None]:
    """transformers draws a "Loading weights" bar for a model that loads in milliseconds: noise on every
    command's stderr. Its progress bars are switched off while the model loads, then restored."""
    try:
        from transformers.utils import logging as hf_logging
    except ImportError:
        yield
        return
    was_enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if was_enabled:
            hf_logging.enable_progress_bar()
