"""`neoweave export DIR` and `neoweave import DIR`: the whole graph as open files, and back into an empty store of
either backend (docs/export.md)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from neoweave.cli.common import app, console, knowledge_base


@app.command("export")
def export_command(
    dest: Annotated[str, typer.Argument(help="a new (or empty) directory for the export")],
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="records per page (default "
                                                   "store.batch_size)", min=1)] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="a progress bar with an ETA")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print the manifest")] = False,
) -> None:
    """Export every node and relationship (vectors included) as gzipped JSON Lines per label and type, with a
    manifest of counts and checksums. Only reads; run it while nothing writes."""
    with knowledge_base(read_only=True) as kb:
        manifest = kb.export(dest, batch_size=batch_size, progress=progress and not as_json)
    if as_json:
        print(json.dumps(manifest, indent=2))
        return
    nodes = sum(entry["count"] for entry in manifest["nodes"].values())
    relationships = sum(entry["count"] for entry in manifest["relationships"].values())
    size = sum(entry["bytes"] for entry in manifest["files"].values())
    console.print(f"exported {nodes} nodes and {relationships} relationships ({size / 1e6:.1f} MB, embedding model "
                  f"{manifest['embedding_model']}) to {dest} in {manifest['seconds']:.1f} s", highlight=False)


@app.command("import")
def import_command(
    src: Annotated[str, typer.Argument(help="a directory written by `neoweave export`")],
    batch_size: Annotated[int | None, typer.Option("--batch-size", help="records per write (default "
                                                   "store.batch_size)", min=1)] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="a progress bar with an ETA")] = True,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Import an export into an empty store (`--store neo4j` for Neo4j): checksums verified first, schema applied,
    nodes and relationships loaded in batches, vector indexes rebuilt where needed. An interrupted import resumes
    when run again with the same DIR."""
    with knowledge_base() as kb:
        report = kb.import_from(src, batch_size=batch_size, progress=progress and not as_json)
    if as_json:
        print(json.dumps(report, indent=2))
        return
    resumed = f" (resumed after {report['resumed_at']} records)" if report["resumed_at"] is not None else ""
    console.print(f"imported {sum(report['nodes'].values())} nodes and {sum(report['relationships'].values())} "
                  f"relationships into {report['store']} in {report['seconds']:.1f} s{resumed}", highlight=False)
