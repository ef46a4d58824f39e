"""`neoweave` command line: one module per command group, each thin over the Python API.

Errors print as one line (what failed, and what to do) unless `--debug` is given.
"""

from __future__ import annotations

import sys

import typer

from neoweave.cli import (  # noqa: F401 - registers the command groups
    common,
    communities,
    datasets,
    enrich,
    entities,
    evaluation,
    explain,
    ingest,
    llm,
    mcp,
    query,
    serve,
    store,
    sync,
    tags,
    transfer,
)
from neoweave.cli.common import app, err_console, state
from neoweave.errors import NeoweaveError
from neoweave.processes import raise_on_sigterm, sigterm_received

__all__ = ["app", "main"]


INTERRUPTED = 130


def _interrupted() -> None:
    """Exit as a stopped command: 130 after Ctrl-C, 143 after SIGTERM, with a line saying which."""
    if sigterm_received():
        err_console.print("stopped (SIGTERM)")
        sys.exit(143)
    err_console.print("interrupted")
    sys.exit(INTERRUPTED)


def main() -> None:
    """Entry point: run the app, turning neoweave errors into one clear line. SIGTERM stops a command as Ctrl-C
    does (its cleanup runs), with exit status 143."""
    raise_on_sigterm()
    try:
        code = app(standalone_mode=False)
        if code == INTERRUPTED:  # typer's answer to KeyboardInterrupt (and so to SIGTERM's Terminated)
            _interrupted()
        if isinstance(code, int) and code:
            sys.exit(code)
    except NeoweaveError as exc:
        if state.debug:
            raise
        err_console.print(f"[red]error[/red]: {exc.message}" + (f"\n  hint: {exc.hint}" if exc.hint else ""),
                          highlight=False, soft_wrap=True)
        sys.exit(1)
    except (typer.Abort, KeyboardInterrupt):
        _interrupted()
    except Exception as exc:  # a bug or an unexpected environment problem: still one line
        # usage errors and exits of click, or of the click typer vendors (typer._click): matched by shape
        exit_code = getattr(exc, "exit_code", None)
        if isinstance(exit_code, int):
            if callable(getattr(exc, "show", None)):
                exc.show()
            sys.exit(exit_code)
        if state.debug:
            raise
        err_console.print(f"[red]error[/red]: {type(exc).__name__}: {exc}\n  hint: rerun with --debug for the "
                          "full traceback", highlight=False, soft_wrap=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
