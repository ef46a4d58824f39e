"""A running `neoweave serve` answers the command line's questions: the models stay loaded between commands.

`serve` writes `serve.json` into the data directory while it serves (its URL, pid, start time and which graph
it serves) and removes it when it stops, on Ctrl-C and SIGTERM alike. `neoweave query` and `explain` find it
there and post to it, unless `--no-server`; a file left by a server that died (or whose pid another process
now has) is removed, one serving another graph is ignored. Only the standard library and psutil are imported
here, so this path starts fast.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from neoweave.config import Settings
from neoweave.errors import NeoweaveError
from neoweave.processes import is_process, process_started

log = logging.getLogger(__name__)
SERVE_FILE = "serve.json"
TIMEOUT_SECONDS = 600.0
"""How long a forwarded request may take (an answer by the local model can take minutes)."""


def serve_file(settings: Settings) -> Path:
    return Path(settings.falkordb.data_dir) / SERVE_FILE


def identity(settings: Settings) -> dict[str, Any]:
    """What a server must serve for a command with these settings to use it."""
    backend = settings.store.backend
    return {"backend": backend, "graph": settings.falkordb.graph if backend == "falkordb" else settings.neo4j.uri,
            "database": settings.neo4j.database if backend == "neo4j" else None,
            "embedding_model": settings.embedding.model}


def announce(settings: Settings, url: str) -> Path:
    """Record a server that is ready at `url` (written atomically); returns the file to remove at exit."""
    path = serve_file(settings)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    record = {"url": url, "pid": os.getpid(), "started": process_started(os.getpid()), **identity(settings)}
    temporary.write_text(json.dumps(record), encoding="utf-8")
    temporary.replace(path)
    return path


def withdraw(path: Path) -> None:
    """Remove the file if it still names this process."""
    with contextlib.suppress(OSError, ValueError):
        if json.loads(path.read_text(encoding="utf-8")).get("pid") == os.getpid():
            path.unlink()


def find_server(settings: Settings) -> str | None:
    """The URL of a live server for this graph, or None. A file whose server is gone is removed."""
    path = serve_file(settings)
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        pid, started = int(record["pid"]), record.get("started")
        alive = is_process(pid, None if started is None else float(started))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not alive:
        with contextlib.suppress(OSError, ValueError):
            if json.loads(path.read_text(encoding="utf-8")) == record:  # not a new server's, written since
                path.unlink()
        log.info("removed %s, left by a server that is gone (pid %s)", path, pid)
        return None
    if {key: record.get(key) for key in identity(settings)} != identity(settings):
        return None
    return str(record.get("url") or "") or None


def post(url: str, path: str, body: dict[str, Any]) -> dict[str, Any] | None:
    """The server's JSON answer; None when it cannot be reached (the caller then works in-process). A request
    the server refuses raises its error, as the in-process path would."""
    data = json.dumps(body).encode("utf-8")
    headers = {"Content-Type": "application/json"}
    if token := os.environ.get("NEOWEAVE_TOKEN"):  # a server started with --token (the token is never on disk)
        headers["Authorization"] = f"Bearer {token}"
    request = urllib.request.Request(url.rstrip("/") + path, data=data, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        if exc.code == 401:
            log.info("the server at %s wants a token (set NEOWEAVE_TOKEN): working in-process", url)
            return None
        try:
            error = json.loads(exc.read().decode("utf-8"))
        except ValueError:
            error = {}
        message = error.get("error") or error.get("detail") or f"HTTP {exc.code}"
        raise NeoweaveError(str(message), hint=error.get("hint")) from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log.info("the server at %s did not answer (%s): working in-process", url, exc)
        return None
