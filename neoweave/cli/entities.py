"""`neoweave entities`: inspect entities, list merges, undo one."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from neoweave.cli.common import console, group, knowledge_base
from neoweave.cli.communities import say_if_reports_withdrawn, withdrawn_reports
from neoweave.errors import NeoweaveError

entities_app = group("entities", "Inspect entities; list and undo resolution merges.")


@entities_app.command("show")
def show(
    name: Annotated[str, typer.Argument(help="an entity id (group:key) or a name")],
    limit: Annotated[int, typer.Option("--limit", help="mentions and relations shown")] = 10,
) -> None:
    """An entity: type, description, aliases, home, mentions and strongest relations."""
    from neoweave.nlp.names import normalize

    with knowledge_base(read_only=True) as kb:
        store = kb.store
        rows = store.run("entity_show", {"id": name, "key": normalize(name)})
        if not rows:
            raise NeoweaveError(f"no entity named {name!r}", hint="entity ids look like person:lothair ii")
        for row in rows:
            console.print(f"[bold]{row['name']}[/bold] ({row['id']}, {row['type']}, {row['method']}, "
                          f"{row['mentions'] or 0} mentions)", highlight=False)
            if row["description"]:
                console.print(f"  {row['description']}", highlight=False)
            if row["aliases"]:
                console.print(f"  aliases: {', '.join(row['aliases'])}", highlight=False)
            if row["homes"]:
                console.print(f"  home: {', '.join(row['homes'])}", highlight=False)
            table = Table("chunk", "as", "context", title="mentions")
            for m in store.run("entity_mentions", {"id": row["id"], "limit": limit}):
                table.add_row(m["chunk_id"], m["name"] or "", (m["context"] or "")[:100])
            console.print(table)
            table = Table("relation", "other", "weight", "evidence", title="relations")
            for r in store.run("entity_relations", {"id": row["id"], "limit": limit}):
                arrow = f"-[{r['type']}]->" if r["outgoing"] else f"<-[{r['type']}]-"
                table.add_row(arrow, r["other_name"] or r["other_id"], f"{r['weight']:.1f}",
                              (r["description"] or "")[:100])
            console.print(table)


@entities_app.command("merges")
def merges(
    entity: Annotated[str | None, typer.Argument(help="only merges involving this entity id")] = None,
    limit: Annotated[int, typer.Option("--limit")] = 50,
) -> None:
    """Resolution merges, newest first: survivor, absorbed, rule, score, status."""
    with knowledge_base(read_only=True) as kb:
        store = kb.store
        rows = store.run("entity_merges", {"ids": [entity] if entity else []})
    table = Table("merge", "survivor", "absorbed", "rule", "score", "forms", "chunks", "status")
    for r in rows[:limit]:
        table.add_row(r["id"], r["survivor_id"], r["absorbed_id"], r["rule"], f"{r['score']:.2f}",
                      ", ".join(r["forms"] or []), str(len(r["chunk_ids"] or [])), r["status"])
    console.print(table)
    console.print(f"{len(rows)} merges")


@entities_app.command("unmerge")
def unmerge(merge: Annotated[str, typer.Argument(help="a merge id, or the id of the absorbed entity")]) -> None:
    """Undo a merge: restore the absorbed entity and its mentions; rebuild the relations of its chunks."""
    from neoweave.enrich.resolution import unmerge as undo

    with knowledge_base() as kb:
        outcome = undo(kb.store, merge)
        record = outcome["record"]
        method = outcome["absorbed"].get("method") or "fast"
        if method not in ("fast", "llm"):
            method = "fast"
        report = kb.enrich("kg", method, chunk_ids=outcome["chunk_ids"])
        withdrawn = withdrawn_reports(kb)
    console.print(f"restored {record['absorbed_id']} from {record['survivor_id']} (rule {record['rule']}); "
                  f"re-extracted {report.chunks} chunks", highlight=False)
    say_if_reports_withdrawn(withdrawn)  # the communities of both entities changed: their reports wait for a rewrite
