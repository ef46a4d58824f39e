"""Where a report's files lie: `neoweave eval --out RUN` writes RUN/records.json and RUN/summary.json, and every
reader accepts the directory or one of its files."""

from __future__ import annotations

from pathlib import Path

RECORDS_FILE = "records.json"
SUMMARY_FILE = "summary.json"


def records_path(run: Path) -> Path:
    """A file given is taken as the records themselves; anything else as a report directory (RUN/records.json)."""
    return run if run.is_file() else run / RECORDS_FILE


def summary_path(run: Path) -> Path:
    """The summary beside a file given (its records.json); anything else is taken as a report directory
    (RUN/summary.json), so a path that does not exist never finds its parent's summary."""
    return run.with_name(SUMMARY_FILE) if run.is_file() else run / SUMMARY_FILE
