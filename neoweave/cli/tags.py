"""`neoweave tags`: show a document's or a chunk's tags; add or remove one (human in the loop, Orion-RAG)."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Annotated

import typer
from rich.table import Table

from neoweave.cli.common import console, group, knowledge_base

tags_app = group("tags", "Show, add and remove topic tags (tag paths are recomputed at once).")

Target = Annotated[str, typer.Argument(help="a document id (master tags) or a chunk id (paragraph tags)")]
By = Annotated[str | None, typer.Option("--by", help="who makes the edit (default: NEOWEAVE_USER or login)")]


def _print(view, as_json: bool) -> None:
    if as_json:
        print(json.dumps(asdict(view), indent=2, ensure_ascii=False))
        return
    console.print(f"[bold]{view.kind} {view.id}[/bold] ({view.title})", highlight=False)
    if view.tag_path:
        console.print(f"tag path: {view.tag_path}", highlight=False)
    table = Table("layer", "tag", "method", "weight", "edit")
    for tag in [*view.master, *view.paragraph]:
        edit = f"{'removed' if tag['removed'] else 'added'} by {tag['by']} {tag['edited_at']}" \
            if tag["method"] == "user" else ""
        weight = "" if tag["weight"] is None else f"{tag['weight']:.2f}"
        table.add_row(tag["layer"], tag["tag"], tag["method"] or "", weight, edit)
    console.print(table)


@tags_app.command("show")
def show(target: Target, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """The master tags (a chunk's document's) and paragraph tags, with who made each, and the tag path."""
    from neoweave.enrich.tag_edits import show_tags

    with knowledge_base(read_only=True) as kb:
        store = kb.store
        _print(show_tags(store, target), as_json)


def _edit(target: str, tag: str, by: str | None, removed: bool, as_json: bool) -> None:
    from neoweave.enrich.tag_edits import add_tag, remove_tag

    with knowledge_base() as kb:
        view = (remove_tag if removed else add_tag)(kb.store, kb.embedder, target, tag, by=by)
    _print(view, as_json)


@tags_app.command("add")
def add(target: Target, tag: Annotated[str, typer.Argument(help="the tag")], by: By = None,
        as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Add a tag; recorded as a user edit no machine run overwrites."""
    _edit(target, tag, by, False, as_json)


@tags_app.command("remove")
def remove(target: Target, tag: Annotated[str, typer.Argument(help="the tag")], by: By = None,
           as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Remove a tag; a machine tag stays removed when the tag enricher runs again."""
    _edit(target, tag, by, True, as_json)
