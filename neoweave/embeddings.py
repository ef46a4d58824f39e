"""Embedding model identity: which model and dimension a graph's vectors come from."""

from __future__ import annotations

from neoweave.config import EmbeddingSettings
from neoweave.errors import ConfigError

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
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ConfigError(
            f"embedding.model '{settings.model}' has no known dimension and sentence-transformers "
            "is not installed", hint="set embedding.dimension, or install neoweave[embed]") from exc
    try:
        model = SentenceTransformer(settings.model, device="cpu")
    except Exception as exc:
        raise ConfigError(f"cannot load embedding.model '{settings.model}': {exc}") from exc
    dimension = model.get_sentence_embedding_dimension()
    if not dimension:
        raise ConfigError(f"embedding.model '{settings.model}' does not report its dimension",
                          hint="set embedding.dimension")
    return int(dimension)
