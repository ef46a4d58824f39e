"""`neoweave llm`: the gateway's endpoint, usage and local model servers."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from neoweave.cli.common import console, group, settings
from neoweave.errors import NeoweaveError

llm_app = group("llm", "The LLM gateway: endpoint check, usage, local model server.")


@llm_app.command("check")
def llm_check(model: Annotated[str | None, typer.Option("--model", help="override llm.model")] = None) -> None:
    """Which endpoint and model are in use; one short structured call through the gateway."""
    from pydantic import BaseModel

    from neoweave.llm import create_gateway

    class Capital(BaseModel):
        country: str
        capital: str

    cfg = settings()
    gateway = create_gateway(cfg, model=model)
    console.print(f"provider {cfg.llm.provider}, endpoint {gateway.endpoint}, model {gateway.model}, "
                  f"structured output: {gateway.structured_output}", highlight=False)
    result = gateway.structured([{"role": "user", "content": "Which country is Paris the capital of? "
                                  "Give the country and its capital."}], Capital, stage="check", cache=False)
    call = result.calls[-1] if result.calls else None
    if not result.ok:
        raise NeoweaveError(f"the model answered, but not with valid structured output: {result.error}")
    console.print(f"structured call ok: {result.value.model_dump()} "
                  f"({call.prompt_tokens}+{call.completion_tokens} tokens, {call.latency_ms:.0f} ms, "
                  f"{call.retries} retries)", highlight=False)


@llm_app.command("usage")
def llm_usage(as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False) -> None:
    """Recorded LLM calls: tokens, cache hits, retries, latency and cost per model and stage."""
    from neoweave.llm import LLMDatabase, database_path

    path = database_path(settings())
    rows = LLMDatabase(path).usage() if path.exists() else []
    if as_json:
        print(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print(f"no LLM calls recorded yet ({path})")
        return
    table = Table("model", "stage", "calls", "cached", "failed", "retries", "prompt tok", "completion tok",
                  "avg ms", "cost USD", title=f"LLM usage ({path})")
    for row in rows:
        paid = row["calls"] - (row["cached"] or 0)
        table.add_row(row["model"], row["stage"], str(row["calls"]), str(row["cached"]), str(row["failed"]),
                      str(row["retries"]), str(row["prompt_tokens"]), str(row["completion_tokens"]),
                      f"{(row['latency_ms'] or 0) / max(paid, 1):.0f}", f"{row['cost_usd'] or 0:.4f}")
    console.print(table)


@llm_app.command("clear-cache")
def llm_clear_cache() -> None:
    """Forget every cached LLM response (the usage log stays). The cache is keyed by content (model, messages,
    parameters), not by document: `delete` and `sync` leave it, since a response is only reused for the very
    same prompt (the same text sent again); clear it to erase every trace of deleted documents' text."""
    from neoweave.llm import LLMDatabase, database_path

    path = database_path(settings())
    if not path.exists():
        console.print(f"no LLM cache yet ({path})")
        return
    database = LLMDatabase(path)
    try:
        cleared = database.clear_responses()
    finally:
        database.close()
    console.print(f"cleared {cleared} cached LLM responses ({path})", highlight=False)


@llm_app.command("stop")
def llm_stop() -> None:
    """Stop the local model servers neoweave started."""
    from neoweave.llm.local import stop_local_servers

    stopped = stop_local_servers(settings().falkordb.data_dir)
    console.print(f"stopped: {', '.join(stopped)}" if stopped else "no local model server was running")


