"""`neoweave sync PATH`: mirror a file or folder (add new documents, update changed ones, delete removed ones)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from neoweave.cli.common import app, console, err_console, knowledge_base, say_if_walk_index_behind
from neoweave.cli.ingest import (
    BaseUrlOption,
    ChunkOverlapOption,
    ChunkSizeOption,
    ContextWordsOption,
    FormatOption,
    JsonOption,
    MaxFileMbOption,
    ProgressOption,
    SkipOption,
    ingest_options,
    print_interrupted,
    print_skipped,
)

if TYPE_CHECKING:
    from neoweave.ingest.sync import SyncReport

_SHOWN = 20  # documents listed per kind in the human output (all of them are in --json)


@app.command()
def sync(
    path: Annotated[Path, typer.Argument(help="a file or folder ingested before (or to ingest)")],
    dry_run: Annotated[bool, typer.Option("--dry-run", help="list what would be added, updated and deleted; "
                                                            "write nothing")] = False,
    allow_empty: Annotated[bool, typer.Option("--allow-empty", help="delete every document read from PATH "
                                                                    "when it now yields none")] = False,
    fmt: FormatOption = "auto",
    base_url: BaseUrlOption = None,
    chunk_size: ChunkSizeOption = None,
    chunk_overlap: ChunkOverlapOption = None,
    max_file_mb: MaxFileMbOption = 20.0,
    context_words: ContextWordsOption = 12,
    skip: SkipOption = None,
    progress: ProgressOption = True,
    as_json: JsonOption = False,
) -> None:
    """Mirror PATH into the graph: documents read from it before that are gone (files removed, records no longer
    in their JSONL file) are deleted with everything derived from them; changed ones are updated, new ones added.
    Give the options PATH was ingested with. Enrich steps are not re-run: the report prints the commands that
    bring them up to date.

    Exit status: 0 when everything was read, 3 when some inputs were skipped (listed in the report).
    """
    from neoweave.ingest import IngestInterrupted

    options = ingest_options(fmt, base_url, chunk_size, chunk_overlap, max_file_mb, context_words, skip)
    try:
        with knowledge_base(read_only=dry_run) as kb:
            report = kb.sync(path, dry_run=dry_run, allow_empty=allow_empty, progress=progress and not as_json,
                             **options)
            if not dry_run:
                say_if_walk_index_behind(kb)
    except IngestInterrupted as stopped:  # nothing was deleted yet: deletions follow a completed ingest
        print_interrupted(stopped.report, f"neoweave sync {path}", f"neoweave ingest {path}")
        raise
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_report(report)
    if report.skipped:
        raise typer.Exit(3)


def _print_report(report: SyncReport) -> None:
    print_skipped(report.skipped)
    for warning in report.warnings:
        err_console.print(f"[yellow]warning[/yellow] {warning}", highlight=False, soft_wrap=True)
    would = "would be " if report.dry_run else ""
    console.print(f"{'dry run: ' if report.dry_run else ''}documents {'that would be ' if report.dry_run else ''}"
                  f"synced from {report.path}", highlight=False, soft_wrap=True)
    table = Table("added", "updated", "deleted", "unchanged", "kept", "skipped")
    table.add_row(str(len(report.added)), str(len(report.updated)), str(len(report.deleted)), str(report.unchanged),
                  str(len(report.kept)), str(len(report.skipped)))
    console.print(table)
    for kind in ("added", "updated", "deleted", "kept"):
        documents = getattr(report, kind)
        for doc in documents[:_SHOWN]:
            where = doc.source or doc.path
            note = f" ({doc.reason})" if doc.reason else ""
            console.print(f"  {would}{kind}: {doc.id}  [dim]{where}[/dim]{note}", highlight=False, soft_wrap=True)
        if len(documents) > _SHOWN:
            console.print(f"  ... and {len(documents) - _SHOWN} more {would}{kind} (see --json)")
    if report.dry_run:
        console.print("dry run: nothing was written")
    elif report.ingest is not None:
        console.print(f"chunks written: {report.ingest.chunks}; {report.files_seen} files seen "
                      f"({report.files_ignored} ignored by type or rule); {report.seconds:.1f} s")
    if report.unattributed:
        console.print(f"{report.unattributed} document(s) in the graph record no source file (ingested from "
                      "memory): sync never deletes them")
    if report.next_steps:
        console.print("derived layers " + ("would be " if report.dry_run else "are now ") +
                      "behind the documents; bring them up to date with:")
        for command in report.next_steps:
            console.print(f"  {command}", highlight=False)
