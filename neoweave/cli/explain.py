"""`neoweave explain`: why an answer was given, as a graph view, JSON, or a Neo4j Browser statement."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neoweave.cli.common import app, console, knowledge_base, settings
from neoweave.cli.query import NO_SERVER_HELP, PROMPT_HELP, request_parameters
from neoweave.errors import NeoweaveError


@app.command()
def explain(
    question: Annotated[str, typer.Argument(help="the question")],
    strategy_name: Annotated[str, typer.Option("--strategy", "-s", help="any strategy of `neoweave query`")]
    = "naive",
    k: Annotated[int | None, typer.Option("--k", help="seed / top-k chunks")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="any strategy parameter: NAME=VALUE "
                                                     "or STRATEGY.NAME=VALUE (repeatable)")] = None,
    html_path: Annotated[Path | None, typer.Option("--html", help="write the graph view here (open it in a "
                                                   "browser, also offline); the renderer it loads, "
                                                   "neoweave-viz-<version>.js/.css, is written beside it once")]
    = None,
    self_contained: Annotated[bool, typer.Option("--self-contained", help="with --html: one file with the "
                                                 "renderer inlined (4.4 MB), to send or archive alone")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the explanation (nodes, relationships, roles, "
                                          "scores, cost) as JSON")] = False,
    as_cypher: Annotated[bool, typer.Option("--cypher", help="print the `:params` line and the statement that "
                                            "draw the same subgraph in Neo4j Browser")] = False,
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer with the LLM gateway")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help=PROMPT_HELP)] = "short_answer",
    documents: Annotated[bool, typer.Option("--documents/--no-documents", help="show each context chunk's "
                                            "document")] = True,
    no_server: Annotated[bool, typer.Option("--no-server", help=NO_SERVER_HELP)] = False,
) -> None:
    """Show the subgraph behind a retrieval: seeds, followed links with their context, entities and relations,
    RST edges, communities and tags, with scores and hops."""
    if html_path is not None and html_path.is_dir():
        raise NeoweaveError(f"--html {html_path} is a directory", hint="give a file name, e.g. why.html")
    parameters = request_parameters(params)
    explanation = _remote(question, strategy_name, k, parameters, with_answer, prompt, documents, no_server)
    if explanation is None:
        with knowledge_base(read_only=not with_answer) as kb:
            explanation = kb.explain(question, strategy_name, k, answer=with_answer, prompt=prompt,
                                     documents=documents, parameters=parameters)
    if html_path is not None:
        explanation.to_html(html_path, self_contained=self_contained)
    if as_json:
        print(explanation.to_json())
    if as_cypher:
        print(explanation.browser_cypher())
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
        from neoweave.cli.query import print_citations

        console.print(f"[bold]answer[/bold]: {explanation.answer}", highlight=False)
        print_citations(explanation.citations)
    if explanation.missing:
        console.print(f"[yellow]not in the graph any more[/yellow]: {', '.join(explanation.missing[:10])}")
    if html_path is not None:
        beside = "" if self_contained else ", with the renderer neoweave-viz-*.js/.css beside it"
        console.print(f"graph view: {html_path}{beside} (open it in a browser; click a node for its text)")
    else:
        console.print("add --html why.html for the graph view, --cypher for Neo4j Browser, --json for the data")


def _remote(question, strategy_name, k, parameters, with_answer, prompt, documents, no_server):
    """The explanation from a running `neoweave serve` for this graph, or None."""
    if no_server:
        return None
    from neoweave.cli.remote import find_server, post

    url = find_server(settings())
    if not url:
        return None
    data = post(url, "/explain", {"question": question, "strategy": strategy_name, "k": k,
                                  "parameters": parameters, "answer": with_answer, "prompt": prompt,
                                  "documents": documents})
    if data is None:
        return None
    from neoweave.audit import Explanation
    from neoweave.serialization import from_data

    return from_data(Explanation, data)
