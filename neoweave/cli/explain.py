"""`neoweave explain`: why an answer was given, as a graph view, JSON, or a Neo4j Browser statement."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from neoweave.cli.common import app, console, open_store
from neoweave.cli.query import retrieve_with, strategy_overrides
from neoweave.errors import NeoweaveError


@app.command()
def explain(
    question: Annotated[str, typer.Argument(help="the question")],
    strategy_name: Annotated[str, typer.Option("--strategy", "-s", help="any strategy of `neoweave query`")]
    = "naive",
    k: Annotated[int | None, typer.Option("--k", help="seed / top-k chunks")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="any strategy parameter: NAME=VALUE "
                                                     "(repeatable)")] = None,
    html_path: Annotated[Path | None, typer.Option("--html", help="write the graph view here (one "
                                                   "self-contained file: open it in a browser)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the explanation (nodes, relationships, roles, "
                                          "scores, cost) as JSON")] = False,
    as_cypher: Annotated[bool, typer.Option("--cypher", help="print the `:params` line and the statement that "
                                            "draw the same subgraph in Neo4j Browser")] = False,
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer with the LLM gateway")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help="the answer prompt (see `neoweave query`)")]
    = "short_answer",
    documents: Annotated[bool, typer.Option("--documents/--no-documents", help="show each context chunk's "
                                            "document")] = True,
) -> None:
    """Show the subgraph behind a retrieval: seeds, followed links with their context, entities and relations,
    RST edges, communities and tags, with scores and hops."""
    from neoweave.audit import explain as explain_result
    from neoweave.audit import render_html

    if html_path is not None and html_path.is_dir():
        raise NeoweaveError(f"--html {html_path} is a directory", hint="give a file name, e.g. why.html")
    overrides = strategy_overrides(strategy_name, params, k=k)
    with open_store() as store:
        result, answered = retrieve_with(store, question, strategy_name, overrides, with_answer, prompt)
        explanation = explain_result(result, store, answer=answered.answer if answered else None,
                                     documents=documents)
    if html_path is not None:
        try:
            html_path.write_text(render_html(explanation), encoding="utf-8")
        except OSError as exc:
            raise NeoweaveError(f"cannot write --html {html_path}: {exc.strerror}") from exc
    if as_json:
        print(json.dumps(explanation.as_dict(), indent=2, default=str))
    if as_cypher:
        from neoweave.cypher import load

        print(explanation.browser_cypher(load("explain_subgraph", "neo4j").text))
    if as_json or as_cypher:
        return
    roles: dict[str, int] = {}
    for node in explanation.nodes:
        roles[node.role] = roles.get(node.role, 0) + 1
    kinds: dict[str, int] = {}
    for rel in explanation.relationships:
        kinds[rel.type] = kinds.get(rel.type, 0) + 1
    console.print(f"[bold]{explanation.strategy}[/bold]: {len(explanation.nodes)} nodes "
                  f"({', '.join(f'{n} {role}' for role, n in sorted(roles.items()))}), "
                  f"{len(explanation.relationships)} relationships "
                  f"({', '.join(f'{n} {kind}' for kind, n in sorted(kinds.items()))})", highlight=False)
    if explanation.answer:
        console.print(f"[bold]answer[/bold]: {explanation.answer}", highlight=False)
    if explanation.missing:
        console.print(f"[yellow]not in the graph any more[/yellow]: {', '.join(explanation.missing[:10])}")
    if html_path is not None:
        console.print(f"graph view: {html_path} (open it in a browser; click a node for its text)")
    else:
        console.print("add --html why.html for the graph view, --cypher for Neo4j Browser, --json for the data")
