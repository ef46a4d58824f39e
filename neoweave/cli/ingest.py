"""`neoweave ingest`: documents into the graph."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from neoweave.cli.common import app, console, err_console, knowledge_base, say_if_walk_index_behind
from neoweave.input_formats import FORMATS

# The reading options `ingest` and `sync` share (the same flags, help and defaults).
FormatOption = Annotated[str, typer.Option("--format", "-f", help="|".join(FORMATS))]
BaseUrlOption = Annotated[str | None, typer.Option("--base-url", help="URL the folder is published at")]
ChunkSizeOption = Annotated[int | None, typer.Option("--chunk-size", help="characters per chunk")]
ChunkOverlapOption = Annotated[int | None, typer.Option("--chunk-overlap", help="overlap in characters")]
MaxFileMbOption = Annotated[float, typer.Option("--max-file-mb", help="skip larger files")]
ContextWordsOption = Annotated[int, typer.Option("--context-words", help="link context words")]
SkipOption = Annotated[list[str] | None, typer.Option("--skip", help="extra glob of relative paths not to read")]
ProgressOption = Annotated[bool, typer.Option("--progress/--no-progress", help="progress bars")]
JsonOption = Annotated[bool, typer.Option("--json", help="print the report as JSON")]


def ingest_options(fmt: str, base_url: str | None, chunk_size: int | None, chunk_overlap: int | None,
                   max_file_mb: float, context_words: int, skip: list[str] | None) -> dict[str, Any]:
    """The reading options `ingest` and `sync` share, as `KnowledgeBase.ingest` / `sync` take them."""
    from neoweave.ingest import HtmlOptions, SourceOptions

    return {"format": fmt, "base_url": base_url, "max_file_bytes": int(max_file_mb * 1024 * 1024),
            "html": HtmlOptions(context_words=context_words),
            "skip_paths": (*SourceOptions().skip_paths, *(skip or ())), "chunk_size": chunk_size,
            "chunk_overlap": chunk_overlap}


@app.command()
def ingest(
    path: Annotated[Path, typer.Argument(help="a file or folder to ingest")],
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
    """Ingest documents: sections, chunks, embeddings, hyperlinks and their contexts. Unchanged documents are
    left alone.

    Ctrl-C (or SIGTERM) stops after the batch being written: what was written is kept (a large document's
    finished sections, marked incomplete), the report says so, and running the same command again finishes it.

    Exit status: 0 when everything was ingested, 3 when some inputs were skipped (listed in the report), 130
    when stopped by Ctrl-C (143 by SIGTERM).
    """
    from neoweave.ingest import IngestInterrupted

    try:
        with knowledge_base() as kb:
            report = kb.ingest(path, **ingest_options(fmt, base_url, chunk_size, chunk_overlap, max_file_mb,
                                                      context_words, skip), progress=progress and not as_json)
            say_if_walk_index_behind(kb)
    except IngestInterrupted as stopped:
        if as_json:
            print(json.dumps(stopped.report.as_dict(), indent=2))
        print_interrupted(stopped.report, f"neoweave ingest {path}", f"neoweave sync {path}")
        raise
    if as_json:
        print(json.dumps(report.as_dict(), indent=2))
    else:
        _print_report(report)
    if report.skipped:
        raise typer.Exit(3)


def print_skipped(skipped: list[str]) -> None:
    """The inputs a read skipped (the first 50; all of them are in --json)."""
    for item in skipped[:50]:
        err_console.print(f"[yellow]skipped[/yellow] {item}", highlight=False, soft_wrap=True)
    if len(skipped) > 50:
        err_console.print(f"... and {len(skipped) - 50} more skipped (see --json)")


def print_interrupted(report, again: str, other: str) -> None:
    """What a stopped ingest kept, and the command that finishes it (on stderr: stdout may be JSON)."""
    whole = (report.documents_new + report.documents_changed + report.documents_resumed
             - report.documents_partly_written)
    kept = f"{report.sections} sections ({report.chunks} chunks)"
    if whole:
        kept += f" in {whole} whole document{'s' if whole != 1 else ''}"
    if partly := report.documents_partly_written:
        kept += f"{' and' if whole else ' of'} {partly} large document{'s' if partly != 1 else ''} in part"
    err_console.print(f"[yellow]interrupted[/yellow]: kept what was written: {kept}", highlight=False,
                      soft_wrap=True)
    for doc in report.incomplete:
        err_console.print(f"  incomplete: {doc['source'] or doc['id']}: {doc['sections_written']} of "
                          f"{doc['sections_total']} sections written (those are searchable; the document is "
                          "marked incomplete)", highlight=False, soft_wrap=True)
    err_console.print(f"To finish, run `{again}` again: it continues where this run stopped (what is stored is "
                      f"not embedded again), then resolves the links; or `{other}`", highlight=False,
                      soft_wrap=True)


def _print_report(report) -> None:
    print_skipped(report.skipped)
    table = Table("new", "changed", "unchanged", "skipped", title="documents ingested")
    table.add_row(str(report.documents_new), str(report.documents_changed), str(report.documents_unchanged),
                  str(len(report.skipped)))
    console.print(table)
    console.print(f"{report.sections} sections, {report.chunks} chunks written; links: "
                  f"{report.links_resolved} resolved, {report.links_unresolved} unresolved, "
                  f"{report.link_contexts_embedded} link contexts embedded; "
                  f"{report.files_seen} files seen ({report.files_ignored} ignored by type or rule); "
                  f"{report.seconds:.1f} s, {report.chunks_per_second:.1f} chunks/s "
                  f"(embedding {report.embed_seconds:.1f} s)")
    if report.documents_resumed:
        console.print(f"{report.documents_resumed} partly written documents completed")
    for doc in report.incomplete:  # left by a stopped run, and not read by this one
        err_console.print(f"[yellow]incomplete[/yellow]: {doc['source'] or doc['id']}: {doc['sections_written']} "
                          f"of {doc['sections_total']} sections written by a stopped run; ingest its file again to "
                          "finish it", highlight=False, soft_wrap=True)

