"""The embedded server's files in its data directory, and what they say: where the socket, pid, log and
append-only files are; whether a pid is this directory's server; whether its log says it has loaded; whether
the directory can be used at all. Read by `falkordb_server.EmbeddedFalkorDB` and nothing else writes them."""

from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from neoweave.errors import NeoweaveError

_MAX_SOCKET_PATH = 100  # sun_path is 108 bytes on Linux; keep a margin
_LOG_TAIL_BYTES = 1 << 20
_STARTING = b"Redis is starting"
_READY = b"Ready to accept connections"


@dataclass(frozen=True)
class ServerPaths:
    data_dir: Path
    socket: Path
    pid_file: Path
    log_file: Path
    lock_file: Path
    search_lock_file: Path
    watchdog_pid_file: Path
    watchdog_log_file: Path
    aof_dir: Path
    """The append-only files (`--appenddirname`): the whole store; the rest of the directory is runtime state."""
    module_file: Path
    """The path of the module the running server loaded (written at its start)."""


def server_paths(data_dir: Path) -> ServerPaths:
    data_dir = data_dir.expanduser().resolve()
    socket = data_dir / "falkordb.sock"
    if len(str(socket)) > _MAX_SOCKET_PATH:
        # A deep data directory would overflow sun_path: use a short, stable path derived from it.
        digest = hashlib.sha1(str(data_dir).encode()).hexdigest()[:16]
        socket = Path(tempfile.gettempdir()) / f"neoweave-{digest}.sock"
    return ServerPaths(
        data_dir=data_dir,
        socket=socket,
        pid_file=data_dir / "falkordb.pid",
        log_file=data_dir / "falkordb.log",
        lock_file=data_dir / "server.lock",
        search_lock_file=data_dir / "vector-search.lock",
        watchdog_pid_file=data_dir / "falkordb-watchdog.pid",
        watchdog_log_file=data_dir / "falkordb-watchdog.log",
        aof_dir=data_dir / "appendonly",
        module_file=data_dir / "falkordb.module",
    )


def snapshot_lock_files(paths: ServerPaths, graph: str) -> tuple[Path, Path, Path]:
    """The lock files that keep a graph's readers apart from its write units (`store.snapshot_gate`): the
    readers-writer lock, the writers' turnstile and the readers waiting at it."""
    return (paths.data_dir / f"reads-{graph}.lock", paths.data_dir / f"writes-{graph}.lock",
            paths.data_dir / f"waiting-{graph}.lock")


def read_pid(pid_file: Path) -> int | None:
    try:
        return int(pid_file.read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def serves(pid: int, socket: Path) -> bool:
    """Whether process `pid` is the server of `socket`, as far as its title shows (redis-server titles itself
    `redis-server unixsocket:PATH`). A copied data directory holds the pid of the original's live server:
    that server is not this directory's. Where the title cannot be read, the pid is trusted."""
    try:
        title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return True
    _, marker, rest = title.partition("unixsocket:")
    if not marker or not rest.split():
        return True
    return os.path.realpath(rest.split()[0]) == os.path.realpath(socket)


def ping(socket: Path, timeout: float = 1.0) -> bool:
    import redis

    if not socket.exists():
        return False
    client = redis.Redis(unix_socket_path=str(socket), socket_timeout=timeout, socket_connect_timeout=timeout)
    try:
        return bool(client.ping())
    except (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError, OSError):
        return False
    except redis.exceptions.BusyLoadingError:
        return False
    finally:
        client.close()


def log_says_ready(log_file: Path) -> bool:
    """Whether the server's latest start (in its log) has finished loading and accepts commands.

    A missing log (never started here, or deleted), or a start older than the log's last megabyte (a
    long-running server; loading writes a few lines), falls back to PING alone.
    """
    try:
        with open(log_file, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - _LOG_TAIL_BYTES))
            tail = handle.read()
    except FileNotFoundError:
        return True
    start = tail.rfind(_STARTING)
    return start < 0 or tail.find(_READY, start) >= 0


def not_a_file(path: Path) -> None:
    """Neither the data directory nor the nearest of its parents that exists is a file."""
    for candidate in (path, *path.parents):
        if candidate.exists():
            if not candidate.is_dir():
                raise NeoweaveError(f"the data directory {path} cannot be used: {candidate} is a file",
                                    hint="give another --data-dir (or NEOWEAVE_DATA_DIR)")
            return


def usable_directory(path: Path) -> None:
    """The data directory exists (created if need be) and is writable, else an error naming it."""
    not_a_file(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NeoweaveError(f"cannot create the data directory {path}: {exc.strerror}",
                            hint="give another --data-dir (or NEOWEAVE_DATA_DIR)") from exc
    probe = path / f".write-probe-{os.getpid()}"
    try:  # a real write: permission bits say nothing to root, nor of read-only mounts
        probe.touch()
        probe.unlink()
    except OSError as exc:
        raise NeoweaveError(f"the data directory {path} is not writable: {exc.strerror}",
                            hint="fix its permissions, or give another --data-dir") from exc
