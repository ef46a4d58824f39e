"""LLM gateway: one OpenAI-compatible client for hosted and local models.

    from neoweave.llm import create_gateway
    llm = create_gateway(load_settings())              # the configured endpoint, or the local model
    llm.chat([{"role": "user", "content": "Hi"}], stage="answer").text
    llm.structured(messages, Triples, stage="kg").value
    llm.ledger.by_stage()                               # tokens, latency, retries, cost per stage
"""

from __future__ import annotations

from pathlib import Path

from neoweave.llm.gateway import (
    ChatResult,
    ContextTooLong,
    LLMError,
    LLMGateway,
    LLMUnavailable,
    StructuredResult,
    structured_each,
)
from neoweave.llm.ledger import LLMCall, TokenLedger, Totals
from neoweave.llm.store import LLMDatabase

__all__ = [
    "ChatResult", "ContextTooLong", "LLMCall", "LLMDatabase", "LLMError", "LLMGateway", "LLMUnavailable",
    "StructuredResult",
    "TokenLedger", "Totals",
    "create_gateway", "database_path", "structured_each",
]

ENDPOINT_TIMEOUT = 120.0
"""Seconds per request to an endpoint when `llm.timeout` is unset."""
LOCAL_TIMEOUT = 900.0
"""Seconds per request to the local model when `llm.timeout` is unset (it answers one request at a time)."""


def database_path(settings) -> Path:
    """The SQLite file holding the response cache and the call log (in the data directory)."""
    return Path(settings.falkordb.data_dir) / "llm.sqlite"


def create_gateway(settings, *, model: str | None = None, ledger: TokenLedger | None = None) -> LLMGateway:
    """A gateway for the configured endpoint (`llm.provider`, `llm.base_url`), or the local model."""
    import openai

    cfg = settings.llm
    model = model or cfg.model
    database = LLMDatabase(database_path(settings)) if cfg.cache else None
    ledger = ledger or TokenLedger(prices=cfg.prices, database=database)
    api_key = cfg.api_key.get_secret_value()
    mode = cfg.structured_output
    server_pid = None
    concurrency = cfg.concurrency
    local = cfg.provider == "local" and not cfg.base_url
    # a local request that times out is not cancelled: the server finishes it while the retry queues behind,
    # so a short timeout on a busy machine turned one slow judge verdict into three (24 timeouts in 17)
    timeout = cfg.timeout or (LOCAL_TIMEOUT if local else ENDPOINT_TIMEOUT)
    if cfg.provider == "azure":
        if not cfg.base_url:
            from neoweave.errors import ConfigError

            raise ConfigError("llm.provider = 'azure' needs llm.base_url (https://<resource>.openai.azure.com)")
        client = openai.AzureOpenAI(api_key=api_key, azure_endpoint=cfg.base_url, api_version=cfg.api_version,
                                    timeout=timeout, max_retries=0)
        endpoint = cfg.base_url
    elif cfg.provider == "openai" or cfg.base_url:
        client = openai.OpenAI(api_key=api_key or "not-needed", base_url=cfg.base_url or None,
                               timeout=timeout, max_retries=0)
        endpoint = cfg.base_url or "https://api.openai.com/v1"
    else:
        from neoweave.llm.local import LocalModelServer, local_model, server_state_dir

        server = LocalModelServer(local_model(model), state_dir=server_state_dir(settings.falkordb.data_dir),
                                  model_dir=cfg.local_model_dir, context=cfg.local_context, threads=cfg.local_threads,
                                  idle_timeout=cfg.local_idle_timeout)
        endpoint = server.ensure_running()
        server_pid = server.pid()
        client = openai.OpenAI(api_key="local", base_url=endpoint, timeout=timeout, max_retries=0)
        if mode == "auto":
            mode = "json_object_schema"  # llama.cpp turns the schema into a grammar
        concurrency = 1  # llama-cpp-python's server answers one request at a time: more would only queue (and
        # time out: two 60 s community reports in flight hit the 120 s timeout)
    if mode == "auto":
        mode = "json_schema"
    return LLMGateway(client, model, ledger=ledger, database=database, temperature=cfg.temperature,
                      max_tokens=cfg.max_tokens, concurrency=concurrency, max_retries=cfg.max_retries,
                      structured_output=mode, endpoint=endpoint,
                      server_pid=server_pid)
