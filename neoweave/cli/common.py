"""What every command module shares: the typer app, global options, settings, consoles, opening the store."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from neoweave.config import Settings, load_settings

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="neoweave: documents into one knowledge graph; questions answered by traversing it.")
console = Console()
err_console = Console(stderr=True)
log = logging.getLogger("neoweave")


def group(name: str, help: str) -> typer.Typer:
    """A command group (`neoweave NAME ...`) attached to the app."""
    sub = typer.Typer(no_args_is_help=True, help=help)
    app.add_typer(sub, name=name)
    return sub


class _State:
    config: Path | None = None
    store: str | None = None
    data_dir: Path | None = None
    debug: bool = False


state = _State()


TIMEOUT_HELP = ("seconds of store time a read may take (a query, a retrieval) before it is stopped; default: "
                "store.read_timeout (30); 0: no limit")
"""`--timeout` of the commands that serve reads (`cypher`, `serve`, `mcp`)."""


def settings(*, read_timeout: float | None = None) -> Settings:
    """The settings the global options name; `read_timeout` (a command's `--timeout`) overrides store.read_timeout."""
    return load_settings(state.config, overrides={"store": {"backend": state.store, "read_timeout": read_timeout},
                                                  "falkordb": {"data_dir": state.data_dir}})


@app.callback()
def _global(
    config: Annotated[Path | None, typer.Option("--config", "-c", help="neoweave.toml to read")] = None,
    store: Annotated[str | None, typer.Option("--store", help="falkordb (embedded default) or neo4j")] = None,
    data_dir: Annotated[Path | None, typer.Option("--data-dir", help="embedded store directory")] = None,
    debug: Annotated[bool, typer.Option("--debug", help="full tracebacks and debug logs")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="info logs")] = False,
) -> None:
    state.config, state.store, state.data_dir, state.debug = config, store, data_dir, debug
    level = logging.DEBUG if debug else logging.INFO if verbose else logging.WARNING
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")


def knowledge_base(*, read_only: bool = False, read_timeout: float | None = None):
    """The knowledge base these options name (a context manager): every command goes through it."""
    from neoweave.kb import KnowledgeBase

    return KnowledgeBase(settings(read_timeout=read_timeout), read_only=read_only)


WALK_INDEX_BEHIND = ("walk index: behind the graph (ppr and kg read the store until `neoweave enrich kg` or "
                     "`neoweave walk-index` rebuilds it; a running server rebuilds it on its next question)")


def say_if_walk_index_behind(kb) -> None:
    """After a write that left ppr's saved walk index behind the graph (`kb.walk.after_write`), say so on stderr
    (stdout may be JSON)."""
    walk = kb.walk_index()
    if walk["saved"] and not walk["current"]:
        err_console.print(WALK_INDEX_BEHIND, highlight=False)
