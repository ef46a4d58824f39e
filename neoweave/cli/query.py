"""`neoweave query` and `neoweave strategies`: retrieve (and answer) with a strategy; list the strategies."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated, Any

import typer

from neoweave.cli.common import app, console, knowledge_base, settings
from neoweave.errors import NeoweaveError
from neoweave.registry import STRATEGIES

STRATEGY_HELP = "one of: " + ", ".join(sorted(STRATEGIES.builtins)) + " (see `neoweave strategies`)"
PROMPT_HELP = "the answer prompt (see `neoweave strategies --prompts`)"
CITE_HELP = "with --answer: the prompt asks for the numbers of the passages used; the sources are listed"
NO_SERVER_HELP = "work in-process even when a `neoweave serve` for this graph is running"


@app.command()
def query(
    question: Annotated[str, typer.Argument(help="the question")],
    strategy_name: Annotated[str, typer.Option("--strategy", "-s", help=STRATEGY_HELP)] = "naive",
    k: Annotated[int | None, typer.Option("--k", help="seed / top-k chunks")] = None,
    n_links: Annotated[int | None, typer.Option("--n-links", help="LARAG: links per section")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="LARAG: hops")] = None,
    top_m: Annotated[int | None, typer.Option("--top-m", help="LARAG: chunks per link")] = None,
    links: Annotated[str | None, typer.Option("--links", help="LARAG: authored | inferred | both")] = None,
    entity_seeds: Annotated[int | None, typer.Option("--entity-seeds", help="LARAG: homes of question "
                                                     "entities added as seeds")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="any strategy parameter: NAME=VALUE "
                                                     "or STRATEGY.NAME=VALUE, repeatable: -P max_facts=10")] = None,
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer with the LLM gateway")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help=PROMPT_HELP)] = "short_answer",
    cite: Annotated[bool, typer.Option("--cite/--no-cite", help=CITE_HELP)] = True,
    as_json: Annotated[bool, typer.Option("--json", help="the full result (items, trace, cost) as JSON")] = False,
    no_server: Annotated[bool, typer.Option("--no-server", help=NO_SERVER_HELP)] = False,
) -> None:
    """Retrieve context for a question with a strategy (and answer it); shows where each piece came from."""
    parameters = request_parameters(params, n_links=n_links, depth=depth, top_m=top_m, links=links,
                                    entity_seeds=entity_seeds)
    result, answered = ask(question, strategy_name, k, parameters, with_answer=with_answer, prompt=prompt,
                           no_server=no_server, cite=cite)
    if as_json:
        print(json.dumps(answered.as_dict() if answered else result.as_dict(), indent=2, default=str))
        return
    print_result(result, answered, prompt)


def request_parameters(params: list[str] | None, **named: Any) -> dict[str, Any]:
    """The named options that were given, then every `-P NAME=VALUE` (as text: typed by the strategy)."""
    parameters = {name: value for name, value in named.items() if value is not None}
    for text in params or []:
        name, sep, value = text.partition("=")
        if not sep or not name.strip():
            raise NeoweaveError(f"-P {text!r} is not NAME=VALUE")
        parameters[name.strip().replace("-", "_")] = value.strip()
    return parameters


def ask(question: str, strategy_name: str, k: int | None, parameters: dict[str, Any], *, with_answer: bool,
        prompt: str, no_server: bool, cite: bool = True):
    """(retrieval, answer or None): from a running `neoweave serve` for this graph, else in-process."""
    if not no_server:
        from neoweave.cli.remote import find_server, post

        url = find_server(settings())
        if url:
            body = {"question": question, "strategy": strategy_name, "k": k, "parameters": parameters}
            data = post(url, "/answer" if with_answer else "/query",
                        {**body, "prompt": prompt, "cite": cite} if with_answer else body)
            if data is not None:
                return _results_from(data, with_answer)
    with knowledge_base(read_only=not with_answer) as kb:
        if with_answer:
            answered = kb.answer(question, strategy_name, k, prompt=prompt, parameters=parameters, cite=cite)
            return answered.retrieval, answered
        return kb.retrieve(question, strategy_name, k, parameters=parameters), None


def _results_from(data: dict[str, Any], with_answer: bool):
    from neoweave.query.base import RetrievalResult
    from neoweave.serialization import from_data

    if with_answer:
        from neoweave.query.answer import AnswerResult

        answered = from_data(AnswerResult, {**data, "call": data.get("llm_call")})
        return answered.retrieval, answered
    return from_data(RetrievalResult, data), None


def print_result(result, answered, prompt: str) -> None:
    from rich.table import Table

    table = Table("#", "origin", "score", "section", "text", title=f"{result.strategy} {result.parameters}")
    for index, item in enumerate(result.items, 1):
        origin = item.origin if item.origin != "link" else f"link (hop {item.details['hop']})"
        table.add_row(str(index), origin, f"{item.score:.3f}", item.section_title or item.section_id,
                      item.text[:160].replace("\n", " ") + ("…" if len(item.text) > 160 else ""))
    console.print(table)
    if result.facts:
        facts = Table("#", "score", "hop", "fact", title="facts")
        for index, fact in enumerate(result.facts, 1):
            facts.add_row(str(index), f"{fact.score:.3f}", str(fact.hop), fact.text()[:200])
        console.print(facts)
    if answered is not None:
        how = f"{prompt}, {answered.call.model}" if answered.call else "no answer call: nothing relevant was found"
        from rich.markup import escape

        console.print(f"[bold]answer[/bold] ({escape(how)}): {escape(answered.cited_answer or answered.answer)}",
                      highlight=False)
        print_citations(answered.citation_rows())
        check = answered.citation_check
        if check is not None and (check.added or check.dropped):
            console.print("  citations checked: the model cited " + "".join(f"[{n}]" for n in check.model)
                          + "".join(f"; {verb} " + "".join(f"[{n}]" for n in numbers) for verb, numbers in
                                    (("added", check.added), ("dropped", check.dropped)) if numbers),
                          style="dim", highlight=False, markup=False)
        if answered.context_dropped:
            console.print(f"[yellow]note[/yellow]: the last {answered.context_dropped} of {len(result.items)} chunks "
                          "did not fit the model's context window and were left out of the prompt", highlight=False)
    if result.points:
        points = Table("#", "score", "key point", "reports", title="key points (map step)")
        for index, point in enumerate(result.points, 1):
            points.add_row(str(index), str(point.score), point.text[:200], str(len(point.community_ids)))
        console.print(points)
    for note in result.trace.notes:  # what the retrieval left out, and the command that repairs it
        console.print(f"note: {note}", style="yellow", highlight=False, markup=False)
    console.print(f"{len(result.items)} chunks, {result.context_tokens} tokens; "
                  + (f"{result.cost.llm_calls} LLM calls, {result.cost.prompt_tokens + result.cost.completion_tokens} "
                     "tokens; " if result.cost.llm_calls else "")
                  + f"{', '.join(f'{k} {v:.0f} ms' for k, v in result.cost.milliseconds.items())}; "
                  f"statements: {statement_summary(result.trace)}", highlight=False)


def print_citations(citations: list[dict[str, Any]]) -> None:
    """The sources an answer cites, one line each; a number that names no retrieved passage is flagged."""
    for citation in citations:
        if citation["known"]:
            title = citation["section_title"] if citation["section_title"] != citation["source"] else ""
            console.print(f"  [{citation['number']}] {citation['source']}" + (f"  ({title})" if title else ""),
                          highlight=False, markup=False)
        else:
            console.print(f"  [{citation['number']}] cites no retrieved passage", style="yellow",
                          highlight=False, markup=False)


def statement_summary(trace) -> str:
    """Each named statement once, with its calls and milliseconds: 'kg_entity_relations x2 8.1 ms, ...'."""
    calls = Counter(trace.statements)
    return ", ".join(f"{name}{f' x{count}' if count > 1 else ''}"
                     + (f" {trace.statement_ms[name]:.1f} ms" if name in trace.statement_ms else "")
                     for name, count in calls.items())


@app.command()
def strategies(
    name: Annotated[str | None, typer.Argument(help="one strategy (all when omitted)")] = None,
    prompts: Annotated[bool, typer.Option("--prompts", help="list the answer prompts instead")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="machine-readable output")] = False,
) -> None:
    """Every retrieval strategy: what it is, which enrich step it needs, its parameters with defaults."""
    if prompts:
        from neoweave.query.prompts import PROMPTS

        listed = [{"name": key, "about": template.about} for key, template in sorted(PROMPTS.items())]
        if as_json:
            print(json.dumps(listed, indent=2))
            return
        for entry in listed:
            console.print(f"[bold]{entry['name']}[/bold]: {entry['about']}", highlight=False)
        return
    from neoweave.query.catalog import strategy_catalog, strategy_entry

    catalog = [strategy_entry(name)] if name else strategy_catalog()
    if as_json:
        print(json.dumps(catalog, indent=2, default=str))
        return
    for entry in catalog:
        needs = ", ".join(f"enrich {step}" for step in entry["requires"]) or "ingest only"
        console.print(f"[bold]{entry['name']}[/bold] ({needs}{'; calls the LLM' if entry['needs_llm'] else ''}): "
                      f"{entry['about']}", highlight=False)
        for parameter in entry["parameters"]:
            console.print(f"    -P {parameter['name']}={parameter['default']!s:<10} {parameter['doc']}",
                          highlight=False, soft_wrap=True)
        if entry["paper"]:
            values = " ".join(f"{key}={value}" for key, value in entry["paper"]["values"].items())
            console.print(f"    -P profile=paper sets: {values} ({entry['paper']['source']})", highlight=False,
                          soft_wrap=True)
