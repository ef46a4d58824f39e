"""`neoweave enrich STEP`: derive entities, relations and links from the stored chunks."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from neoweave.cli.common import app, console, knowledge_base
from neoweave.cli.communities import say_if_reports_withdrawn, withdrawn_reports
from neoweave.cli.query import request_parameters


@app.command()
def enrich(
    step: Annotated[str, typer.Argument(help="the enrich step: kg, communities, tags, rst")],
    method: Annotated[str, typer.Option("--method", "-m", help="fast (no LLM) or llm")] = "fast",
    limit: Annotated[int | None, typer.Option("--limit", help="process at most N pending chunks")] = None,
    docs: Annotated[list[str] | None, typer.Option("--docs", help="only chunks of these document ids")] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="chunks per write unit")] = None,
    params: Annotated[list[str] | None, typer.Option("--param", "-P", help="any step parameter: NAME=VALUE "
                                                     "(repeatable), e.g. -P entity_types=person,work")] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="progress bars")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Run an enrich step over every chunk it has not processed yet (resumable, incremental)."""
    from neoweave.registry import ENRICH_STEPS

    parameters = dict(request_parameters(params))
    if batch_size:
        parameters["batch_size"] = batch_size
    with knowledge_base() as kb:
        report = kb.enrich(step, method, limit=limit, doc_ids=docs, progress=progress and not as_json, **parameters)
        withdrawn = withdrawn_reports(kb) if step != "communities" else 0
    graph_wide = ENRICH_STEPS.get(step).graph_wide
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
        return
    table = Table("counter", "value", title=f"enrich {report.step} ({report.signature})")
    if not graph_wide:
        table.add_row("chunks processed", str(report.chunks))
    for name, value in sorted(report.counters.items()):
        table.add_row(name, str(value))
    if report.llm_calls:
        table.add_row("LLM calls / prompt / completion tokens",
                      f"{report.llm_calls} / {report.prompt_tokens} / {report.completion_tokens}")
    console.print(table)
    if graph_wide:
        console.print(f"{report.seconds:.1f} s")
    else:
        console.print(f"{report.seconds:.1f} s (extract {report.extract_seconds:.1f}, write "
                      f"{report.write_seconds:.1f}, graph-wide phases {report.finish_seconds:.1f}); "
                      f"{report.chunks_per_second:.1f} chunks/s")
    if report.finish_skipped:
        console.print("graph-wide phases skipped: the graph has not changed since they last ran", highlight=False)
    if "entities_in_scope" in report.counters:
        console.print(f"graph-wide phases read the {report.counters['entities_in_scope']} entities changed since "
                      f"they last completed (of {report.counters.get('entities', 0)})", highlight=False)
    if report.phase_seconds:
        console.print("graph-wide phases: " + ", ".join(f"{name} {seconds:.1f} s"
                                                        for name, seconds in report.phase_seconds.items()),
                      highlight=False)
    for failure in report.failures[:10]:
        console.print(f"[yellow]fell back to fast[/yellow] {failure}", highlight=False)
    say_if_reports_withdrawn(withdrawn)
