"""`neoweave` command line: a thin layer over config, stores and the graph schema.

Errors print as one line (what failed, and what to do) unless `--debug` is given.
"""

from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from neoweave.config import Settings, load_settings
from neoweave.errors import NeoweaveError

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="neoweave: documents into one knowledge graph; questions answered by traversing it.")
server_app = typer.Typer(no_args_is_help=True, help="The embedded FalkorDB server (the default store).")
app.add_typer(server_app, name="server")
llm_app = typer.Typer(no_args_is_help=True, help="The LLM gateway: endpoint check, usage, local model server.")
app.add_typer(llm_app, name="llm")
datasets_app = typer.Typer(no_args_is_help=True, help="Build evaluation datasets.")
app.add_typer(datasets_app, name="datasets")

console = Console()
err_console = Console(stderr=True)
log = logging.getLogger("neoweave")


class _State:
    config: Path | None = None
    store: str | None = None
    data_dir: Path | None = None
    debug: bool = False


state = _State()


def settings() -> Settings:
    return load_settings(state.config, overrides={"store": {"backend": state.store},
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


def _open():
    from neoweave.store import open_store

    return open_store(settings())


@app.command()
def init() -> None:
    """Apply the graph schema (constraints, vector and full-text indexes) and record the Meta node."""
    from neoweave.embeddings import resolve_dimension

    cfg = settings()
    dimension = resolve_dimension(cfg.embedding)
    with _open() as store:
        created = store.apply_schema(cfg.embedding.model, dimension)
        health = store.health()
    console.print(f"schema applied on {health['backend']} ({health['address']}): "
                  f"{len(created)} new constraints/indexes, embedding model {cfg.embedding.model} "
                  f"(dimension {dimension})")


@app.command()
def status(as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False) -> None:
    """Counts per label and relationship type, indexes, schema version and embedding model."""
    with _open() as store:
        health = store.health()
        meta = store.read_meta()
        counts = store.counts()
        indexes = store.indexes()
        constraints = store.constraints()
    if as_json:
        print(json.dumps({"store": health, "meta": meta, "nodes": counts.nodes,
                          "relationships": counts.relationships, "indexes": indexes,
                          "constraints": constraints}, default=str, indent=2))
        return
    console.print(f"[bold]store[/bold]: {health['backend']} at {health['address']} "
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
    query: Annotated[str, typer.Argument(help="a Cypher query (read-only unless --write)")],
    param: Annotated[list[str] | None, typer.Option("--param", "-p", help="KEY=VALUE (VALUE parsed as JSON)")] = None,
    write: Annotated[bool, typer.Option("--write", help="allow clauses that change the graph")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="rows as JSON lines")] = False,
) -> None:
    """Run a Cypher query against the graph and print the rows."""
    params = dict(_parse_param(p) for p in param or [])
    with _open() as store:
        rows = store.query(query, params, write=write)
    if as_json:
        for row in rows:
            print(json.dumps(row, default=str))
        return
    if not rows:
        console.print("(no rows)")
        return
    table = Table(*rows[0].keys())
    for row in rows:
        table.add_row(*(json.dumps(v, default=str) if not isinstance(v, str) else v for v in row.values()))
    console.print(table)
    console.print(f"{len(rows)} rows")


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="a file or folder to ingest")],
    fmt: Annotated[str, typer.Option("--format", "-f", help="auto|html|jsonl|json|text|markdown")] = "auto",
    base_url: Annotated[str | None, typer.Option("--base-url", help="URL the folder is published at")] = None,
    chunk_size: Annotated[int | None, typer.Option("--chunk-size", help="characters per chunk")] = None,
    chunk_overlap: Annotated[int | None, typer.Option("--chunk-overlap", help="overlap in characters")] = None,
    max_file_mb: Annotated[float, typer.Option("--max-file-mb", help="skip larger files")] = 20.0,
    context_words: Annotated[int, typer.Option("--context-words", help="link context words")] = 12,
    skip: Annotated[list[str] | None, typer.Option("--skip", help="extra glob of relative paths not to read")] = None,
    link_contexts: Annotated[bool, typer.Option("--link-contexts", help="embed every link's context now "
                                                "(LARAG otherwise embeds each on first use)")] = False,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="progress bars")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Ingest documents: sections, chunks, embeddings, hyperlinks. Unchanged documents are left alone.

    Exit status: 0 when everything was ingested, 3 when some inputs were skipped (listed in the report).
    """
    from neoweave.embeddings import Embedder
    from neoweave.ingest import HtmlOptions, IngestOptions, Ingestor, SourceOptions

    cfg = settings()
    try:
        options = IngestOptions(
            sources=SourceOptions(format=fmt, base_url=base_url, max_file_bytes=int(max_file_mb * 1024 * 1024),
                                  html=HtmlOptions(context_words=context_words),
                                  skip_paths=(*SourceOptions().skip_paths, *(skip or ()))),
            chunk_size=chunk_size, chunk_overlap=chunk_overlap, progress=progress and not as_json,
        )
        for kind in ("html", "record"):
            options.chunking(kind)
    except ValueError as exc:
        raise NeoweaveError(f"invalid ingest option: {exc}") from exc
    embedder = Embedder(cfg.embedding.model)
    with _open() as store:
        report = Ingestor(store, embedder, options).ingest(path)
        if link_contexts:
            from neoweave.ingest.link_contexts import embed_all_link_contexts

            embedded = embed_all_link_contexts(store, embedder, progress=progress and not as_json)
            if not as_json:
                console.print(f"link contexts embedded: {embedded}")
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_report(report)
    if report.skipped:
        raise typer.Exit(3)


def _print_report(report) -> None:
    for skipped in report.skipped[:50]:
        err_console.print(f"[yellow]skipped[/yellow] {skipped}", highlight=False, soft_wrap=True)
    if len(report.skipped) > 50:
        err_console.print(f"... and {len(report.skipped) - 50} more skipped (see --json)")
    table = Table("documents", "new", "changed", "unchanged", "skipped", title="ingest report")
    table.add_row("", str(report.documents_new), str(report.documents_changed), str(report.documents_unchanged),
                  str(len(report.skipped)))
    console.print(table)
    console.print(f"{report.sections} sections, {report.chunks} chunks written; links: "
                  f"{report.links_resolved} resolved, {report.links_unresolved} unresolved; "
                  f"{report.files_seen} files seen ({report.files_ignored} ignored by type or rule); "
                  f"{report.seconds:.1f} s, {report.chunks_per_second:.1f} chunks/s "
                  f"(embedding {report.embed_seconds:.1f} s)")


@app.command()
def query(
    question: Annotated[str, typer.Argument(help="the question")],
    strategy_name: Annotated[str, typer.Option("--strategy", "-s", help="naive | larag")] = "naive",
    k: Annotated[int | None, typer.Option("--k", help="seed / top-k chunks")] = None,
    n_links: Annotated[int | None, typer.Option("--n-links", help="LARAG: links per section")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="LARAG: hops")] = None,
    top_m: Annotated[int | None, typer.Option("--top-m", help="LARAG: chunks per link")] = None,
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer with the LLM gateway")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help="basic|role|reasoning|hyperlinked|unified|short_answer")]
    = "short_answer",
    as_json: Annotated[bool, typer.Option("--json", help="the full result (items, trace, cost) as JSON")] = False,
) -> None:
    """Retrieve context for a question with a strategy (and answer it); shows where each piece came from."""
    from neoweave.embeddings import Embedder
    from neoweave.query import strategy

    cfg = settings()
    overrides = {name: value for name, value in
                 (("k", k), ("n_links", n_links), ("depth", depth), ("top_m", top_m)) if value is not None}
    with _open() as store:
        meta = store.read_meta()
        if meta is None:
            raise NeoweaveError("the graph is empty", hint="run `neoweave ingest PATH` first")
        embedder = Embedder(cfg.embedding.model)
        store.check_meta(cfg.embedding.model, embedder.dimension)  # also loads the model before timing starts
        chosen = strategy(strategy_name, store, embedder, **overrides)
        answered = None
        if with_answer:
            from neoweave.llm import create_gateway
            from neoweave.query.answer import answer

            answered = answer(question, strategy=chosen, llm=create_gateway(cfg), prompt=prompt)
            result = answered.retrieval
        else:
            result = chosen.retrieve(question)
    if as_json:
        print(json.dumps(answered.as_dict() if answered else result.as_dict(), indent=2, default=str))
        return
    table = Table("#", "origin", "score", "section", "text", title=f"{result.strategy} {result.parameters}")
    for index, item in enumerate(result.items, 1):
        origin = item.origin if item.origin != "link" else f"link (hop {item.details['hop']})"
        table.add_row(str(index), origin, f"{item.score:.3f}", item.section_title or item.section_id,
                      item.text[:160].replace("\n", " ") + ("…" if len(item.text) > 160 else ""))
    console.print(table)
    if answered is not None:
        console.print(f"[bold]answer[/bold] ({prompt}, {answered.call.model}): {answered.answer}", highlight=False)
    console.print(f"{len(result.items)} chunks, {result.context_tokens} tokens; "
                  f"{', '.join(f'{k} {v:.0f} ms' for k, v in result.cost.milliseconds.items())}; "
                  f"statements: {', '.join(result.trace.statements)}", highlight=False)


@app.command("eval")
def evaluate(
    qa: Annotated[Path, typer.Option("--qa", help="QA set (JSONL: id, question, answer, aliases, evidence, type)")],
    corpus: Annotated[Path | None, typer.Option("--corpus", help="ingest this first (skipped when unchanged)")] = None,
    strategies: Annotated[str, typer.Option("--strategies", help="comma-separated strategy names")] = "naive,larag",
    ks: Annotated[str, typer.Option("--k", help="comma-separated k values")] = "5",
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer and score the answers")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help="answer prompt, or per strategy: "
                                        "naive=unified,larag=hyperlinked")] = "short_answer",
    max_tokens: Annotated[int | None, typer.Option("--max-tokens", help="answer length cap")] = None,
    bertscore: Annotated[bool, typer.Option("--bertscore/--no-bertscore", help="score answers with BERTScore")] = True,
    base_url: Annotated[str | None, typer.Option("--base-url", help="for --corpus")] = None,
    limit: Annotated[int | None, typer.Option("--limit", help="first N questions only")] = None,
    types: Annotated[str | None, typer.Option("--type", help="only these question types (comma-separated)")] = None,
    out: Annotated[Path, typer.Option("--out", help="report directory")] = Path("eval-out"),
) -> None:
    """Compare strategies on a QA set: retrieval, answers, latency, memory; report.md, JSON and a plot."""
    from neoweave.eval.pipeline import evaluate as run_evaluation
    from neoweave.eval.runner import RunConfig, markdown_table

    try:
        k_values = [int(k) for k in ks.split(",") if k.strip()]
    except ValueError as exc:
        raise NeoweaveError(f"--k must be comma-separated integers, got {ks!r}") from exc
    if not k_values or min(k_values) < 1:
        raise NeoweaveError(f"--k needs positive integers, got {ks!r}")
    names = [s.strip() for s in strategies.split(",") if s.strip()]
    default_prompt, per_strategy = _parse_prompts(prompt, names)
    config = RunConfig(names, k_values, with_answer, default_prompt, per_strategy, max_tokens)
    if not bertscore:
        config.bertscore = None
    outcome = run_evaluation(settings(), qa, config, out, corpus=corpus, base_url=base_url, limit=limit,
                             types=[t.strip() for t in types.split(",") if t.strip()] if types else None)
    console.print(markdown_table([r for r in outcome.rows if r["type"] == "all"]), highlight=False, soft_wrap=True)
    console.print(f"report: {outcome.report}", highlight=False)


def _parse_prompts(value: str, strategies: list[str]) -> tuple[str, dict[str, str]]:
    """`name` for every strategy, or `strategy=name,...` (strategies not named use short_answer)."""
    from neoweave.query.prompts import get_prompt

    if "=" not in value:
        get_prompt(value)
        return value, {}
    per_strategy = {}
    for part in value.split(","):
        name, _, template = part.partition("=")
        if name.strip() not in strategies:
            raise NeoweaveError(f"--prompt names strategy {name.strip()!r}, which is not in --strategies")
        get_prompt(template.strip())
        per_strategy[name.strip()] = template.strip()
    return "short_answer", per_strategy


@datasets_app.command("sphinx-faq")
def sphinx_faq(
    html_dir: Annotated[Path, typer.Argument(help="root of a Sphinx HTML build (with a faq/ folder)")],
    out: Annotated[Path, typer.Option("--out", help="output directory (qa.jsonl, corpus/)")],
    base_url: Annotated[str | None, typer.Option("--base-url", help="URL the docs are published at")] = None,
) -> None:
    """QA set from the FAQ pages (gold evidence = the sections answers link to); corpus without the FAQ."""
    from neoweave.eval.sphinx_faq import build_sphinx_faq

    result = build_sphinx_faq(html_dir, out, base_url=base_url)
    console.print(f"{result.questions} questions ({result.without_evidence} without links) -> {result.qa_path}; "
                  f"corpus without the FAQ -> {result.corpus_dir}", highlight=False)
    console.print((out / "README.md").read_text(), highlight=False)


@app.command()
def delete(key: Annotated[str, typer.Argument(help="a document id, or a file/folder that was ingested")]) -> None:
    """Delete documents and everything only they own (sections, chunks, their links)."""
    from neoweave.ingest import delete as delete_documents

    ids = delete_documents(key, settings=settings())
    if not ids:
        raise NeoweaveError(f"no document has id or path {key!r}", hint="see `neoweave cypher "
                            "\"MATCH (d:Document) RETURN d.id, d.path LIMIT 20\"`")
    console.print(f"deleted {len(ids)} document(s)")
    for doc_id in ids[:20]:
        console.print(f"  {doc_id}", highlight=False)


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
    """Whether the embedded server is running, and where."""
    from neoweave.store import embedded_server

    server = embedded_server(settings())
    pid = server.pid()
    console.print(f"running: pid {pid}, socket {server.socket_path}" if server.is_running()
                  else f"not running (data directory {server.paths.data_dir})")


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


@llm_app.command("stop")
def llm_stop() -> None:
    """Stop the local model servers neoweave started."""
    from neoweave.llm.local import stop_local_servers

    stopped = stop_local_servers(settings().falkordb.data_dir)
    console.print(f"stopped: {', '.join(stopped)}" if stopped else "no local model server was running")


def main() -> None:
    """Entry point: run the app, turning neoweave errors into one clear line."""
    try:
        code = app(standalone_mode=False)
        if isinstance(code, int) and code:
            sys.exit(code)
    except NeoweaveError as exc:
        if state.debug:
            raise
        err_console.print(f"[red]error[/red]: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""),
                          highlight=False, soft_wrap=True)
        sys.exit(1)
    except (typer.Abort, KeyboardInterrupt):
        err_console.print("aborted")
        sys.exit(130)
    except Exception as exc:  # a bug or an unexpected environment problem: still one line
        import click

        if isinstance(exc, click.exceptions.ClickException):
            exc.show()
            sys.exit(exc.exit_code)
        if isinstance(exc, click.exceptions.Exit):
            sys.exit(exc.exit_code)
        if state.debug:
            raise
        err_console.print(f"[red]error[/red]: {type(exc).__name__}: {exc}\n  hint: rerun with --debug for the "
                          "full traceback", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
