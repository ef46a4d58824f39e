"""`neoweave query`: retrieve (and answer) with a strategy."""

from __future__ import annotations

import json
from collections import Counter
from typing import Annotated

import typer
from rich.table import Table

from neoweave.cli.common import app, console, open_store, settings
from neoweave.errors import NeoweaveError


@app.command()
def query(
    question: Annotated[str, typer.Argument(help="the question")],
    strategy_name: Annotated[str, typer.Option("--strategy", "-s", help="naive | larag | kg | ppr | hybrid | "
                                                      "orion | khl | community_local | community_global")] = "naive",
    k: Annotated[int | None, typer.Option("--k", help="seed / top-k chunks")] = None,
    n_links: Annotated[int | None, typer.Option("--n-links", help="LARAG: links per section")] = None,
    depth: Annotated[int | None, typer.Option("--depth", help="LARAG: hops")] = None,
    top_m: Annotated[int | None, typer.Option("--top-m", help="LARAG: chunks per link")] = None,
    links: Annotated[str | None, typer.Option("--links", help="LARAG: authored | inferred | both")] = None,
    entity_seeds: Annotated[int | None, typer.Option("--entity-seeds", help="LARAG: homes of question "
                                                     "entities added as seeds")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="any strategy parameter: NAME=VALUE "
                                                     "(repeatable), e.g. -P max_facts=10")] = None,
    with_answer: Annotated[bool, typer.Option("--answer", help="also answer with the LLM gateway")] = False,
    prompt: Annotated[str, typer.Option("--prompt", help="basic|role|reasoning|hyperlinked|unified|short_answer|"
                                                   "global_reduce")]
    = "short_answer",
    as_json: Annotated[bool, typer.Option("--json", help="the full result (items, trace, cost) as JSON")] = False,
) -> None:
    """Retrieve context for a question with a strategy (and answer it); shows where each piece came from."""
    overrides = strategy_overrides(strategy_name, params, k=k, n_links=n_links, depth=depth, top_m=top_m,
                                   links=links, entity_seeds=entity_seeds)
    with open_store() as store:
        result, answered = retrieve_with(store, question, strategy_name, overrides, with_answer, prompt)
    if as_json:
        print(json.dumps(answered.as_dict() if answered else result.as_dict(), indent=2, default=str))
        return
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
        console.print(f"[bold]answer[/bold] ({how}): {answered.answer}", highlight=False)
    if result.points:
        points = Table("#", "score", "key point", "reports", title="key points (map step)")
        for index, point in enumerate(result.points, 1):
            points.add_row(str(index), str(point.score), point.text[:200], str(len(point.community_ids)))
        console.print(points)
    console.print(f"{len(result.items)} chunks, {result.context_tokens} tokens; "
                  + (f"{result.cost.llm_calls} LLM calls, {result.cost.prompt_tokens + result.cost.completion_tokens} "
                     "tokens; " if result.cost.llm_calls else "")
                  +
                  f"{', '.join(f'{k} {v:.0f} ms' for k, v in result.cost.milliseconds.items())}; "
                  f"statements: {statement_summary(result.trace)}", highlight=False)


def statement_summary(trace) -> str:
    """Each named statement once, with its calls and milliseconds: 'kg_entity_relations x2 8.1 ms, ...'."""
    calls = Counter(trace.statements)
    return ", ".join(f"{name}{f' x{count}' if count > 1 else ''}"
                     + (f" {trace.statement_ms[name]:.1f} ms" if name in trace.statement_ms else "")
                     for name, count in calls.items())


def strategy_overrides(strategy_name: str, params: list[str] | None, **named) -> dict:
    """The named options that were given, then every `-P NAME=VALUE`, checked against the strategy."""
    from neoweave.registry import STRATEGIES

    overrides = {name: value for name, value in named.items() if value is not None}
    overrides.update(STRATEGIES.get(strategy_name).parse_parameter(text) for text in params or [])
    return overrides


def retrieve_with(store, question: str, strategy_name: str, overrides: dict, with_answer: bool, prompt: str):
    """Retrieve with a strategy on an open store (and answer): (result, answered or None)."""
    from neoweave.embeddings import Embedder
    from neoweave.query import strategy
    from neoweave.registry import STRATEGIES

    cfg = settings()
    meta = store.read_meta()
    if meta is None:
        raise NeoweaveError("the graph is empty", hint="run `neoweave ingest PATH` first")
    embedder = Embedder(cfg.embedding.model)
    store.check_meta(cfg.embedding.model, embedder.dimension)  # also loads the model before timing starts
    from neoweave.query.router import configured

    overrides = configured(cfg, strategy_name, overrides)
    llm = None
    if with_answer or STRATEGIES.get(strategy_name).wants_llm(overrides):
        from neoweave.llm import create_gateway

        llm = create_gateway(cfg)
    chosen = strategy(strategy_name, store, embedder, llm, **overrides)
    if with_answer:
        from neoweave.query.answer import answer

        answered = answer(question, strategy=chosen, llm=llm, prompt=prompt)
        return answered.retrieval, answered
    return chosen.retrieve(question), None
