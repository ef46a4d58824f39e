"""`neoweave communities`: the Leiden communities and their reports."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from neoweave.cli.common import console, group, knowledge_base
from neoweave.errors import NeoweaveError

if TYPE_CHECKING:
    from neoweave.kb import KnowledgeBase

REPORTS_WITHDRAWN = ("{count} community report(s) are older than their members: withdrawn from retrieval until "
                     "`neoweave enrich communities` rewrites them")
"""What a write that left community reports stale prints (delete, enrich kg, entities unmerge)."""


def withdrawn_reports(kb: KnowledgeBase) -> int:
    """How many community reports are older than a change to their members (retrieval does not serve them)."""
    return sum(int(row.get("withdrawn") or 0) for row in kb.store.run("community_levels"))


def say_if_reports_withdrawn(count: int) -> None:
    if count:
        console.print(REPORTS_WITHDRAWN.format(count=count), style="yellow", highlight=False, markup=False)


communities_app = group("communities", "List communities per level; print a community's report.")


@communities_app.command("list")
def list_communities(
    level: Annotated[int | None, typer.Option("--level", help="only this level (0 = broadest)")] = None,
    limit: Annotated[int, typer.Option("--limit", help="rows shown")] = 20,
) -> None:
    """Counts and sizes per level, then the highest-rated communities."""
    with knowledge_base(read_only=True) as kb:
        store = kb.store
        levels = store.run("community_levels")
        if not levels:
            raise NeoweaveError("the graph has no communities", hint="run `neoweave enrich communities`")
        table = Table("level", "communities", "min size", "max size", "mean size", "without report",
                      title="communities per level")
        for row in levels:
            table.add_row(str(row["level"]), str(row["communities"]), str(row["min_size"]), str(row["max_size"]),
                          f"{row['mean_size']:.1f}", str(int(row["without_report"] or 0)))
        console.print(table)
        rows = store.run("community_top", {"level": -1 if level is None else level, "limit": limit})
    table = Table("id", "level", "size", "sub", "rating", "title", title="communities, highest rated first")
    for row in rows:
        table.add_row(row["id"], str(row["level"]), str(row["size"]), str(row["children"] or 0),
                      f"{row['rating'] or 0:.1f}", row["title"] or "")
    console.print(table)


@communities_app.command("show")
def show(community_id: Annotated[str, typer.Argument(help="a community id (see `neoweave communities list`)")]
         ) -> None:
    """A community's report, with its parent and sub-communities."""
    with knowledge_base(read_only=True) as kb:
        store = kb.store
        rows = store.run("community_report", {"id": community_id})
    if not rows:
        raise NeoweaveError(f"no community {community_id!r}", hint="ids are listed by `neoweave communities list`")
    row = rows[0]
    console.print(f"[bold]{row['id']}[/bold]: level {row['level']}, {row['size']} entities, rating "
                  f"{row['rating'] or 0:.1f} ({row['method']})", highlight=False)
    if row["parent_id"]:
        console.print(f"parent: {row['parent_id']}", highlight=False)
    if row["children"]:
        console.print(f"sub-communities: {', '.join(sorted(row['children']))}", highlight=False)
    console.print(row["full_report"] or "(no report yet: run `neoweave enrich communities`)", highlight=False,
                  markup=False)
