"""The watchdog of a server neoweave leaves running (`python -m neoweave.watchdog`).

The embedded FalkorDB server and the local model server outlive commands on purpose (the next command reuses
them). Each gets a watchdog, started by `start_watchdog`, that stops its server when the server's data
directory is removed (its pid or state file is gone) or when the server has been idle for `idle_timeout`
seconds, and that exits itself when the server exits. Pid helpers (alive, start time, terminate) are in
`neoweave.processes`.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.processes import is_process, process_started, terminate

log = logging.getLogger(__name__)

WATCHDOG_MODULE = "neoweave.watchdog"
WATCHDOG_POLL_ENV = "NEOWEAVE_WATCHDOG_POLL"
"""Seconds between a watchdog's checks when a server is started without an explicit poll interval (tests set
it low so a removed data directory is noticed in a second)."""
DEFAULT_WATCHDOG_POLL = 5.0
MAX_PROBE_INTERVAL = 60.0
"""Seconds between two looks at a server's use (commands sent to it), however short the poll: see
`probe_interval`."""


def watchdog_poll(poll: float | None = None) -> float:
    """The poll interval to use: `poll` if given, else $NEOWEAVE_WATCHDOG_POLL, else 5 s."""
    if poll is not None:
        return poll
    with contextlib.suppress(KeyError, ValueError):
        return max(0.05, float(os.environ[WATCHDOG_POLL_ENV]))
    return DEFAULT_WATCHDOG_POLL


def named_pid(path: Path) -> int | None:
    """The pid a pid file (`123`) or state file (`{"pid": 123, ...}`) names; None if it is missing.

    Raises ValueError when the file exists but cannot be read as either (it may be half written)."""
    try:
        text = path.read_text().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    if text.startswith("{"):
        try:
            return int(json.loads(text)["pid"])
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise ValueError(f"{path} names no pid") from exc
    return int(text)


def register_user(directory: Path) -> None:
    """Record this process as a user of a server: a file named by its pid, holding its start time. A watchdog
    counts the server in use while a registered process runs (`neoweave serve`, a notebook's knowledge base)."""
    with contextlib.suppress(OSError):
        directory.mkdir(parents=True, exist_ok=True)
        started = process_started(os.getpid())
        entry = directory / str(os.getpid())
        entry.write_text("" if started is None else repr(started))
        if entry not in _registered:  # gone with this process (also on Ctrl-C or SIGTERM through the CLI)
            _registered.add(entry)
            atexit.register(_unregister, entry)


_registered: set[Path] = set()


def _unregister(entry: Path) -> None:
    with contextlib.suppress(OSError):
        entry.unlink()
    _registered.discard(entry)


def live_users(directory: Path) -> int:
    """How many registered users of a server still run; the entries of those gone are removed."""
    count = 0
    try:
        entries = list(directory.iterdir())
    except OSError:
        return 0
    for entry in entries:
        try:
            pid, started = int(entry.name), float(entry.read_text() or "nan")
        except (OSError, ValueError):
            continue
        if is_process(pid, None if started != started else started):  # NaN: start time unknown
            count += 1
        else:
            entry.unlink(missing_ok=True)
    return count


class _RedisActivity:
    """Use of a Redis (FalkorDB) server, read from the server itself: a client connected other than watchdogs (a
    store object holds its connection while it is open), or commands run since the last look.

    Redis counts calls per command (`INFO commandstats`) and lists connections (CLIENT LIST), so this costs two
    commands per poll on one kept connection, and clients need not report anything: a long `enrich` whose
    connection is busy counts as use. INFO, HELLO and CLIENT calls are left out of the count, and watchdogs'
    connections are named and left out of the clients, so that watchdogs (this one, a second one) never keep a
    server alive. It speaks RESP over the unix socket itself: redis-py would double the watchdog's memory."""

    NAME = "neoweave-watchdog"
    OWN = frozenset({"info", "hello"})  # with CLIENT *: what watchdogs and connection handshakes send

    def __init__(self, socket_path: str, timeout: float = 10.0) -> None:
        self.socket_path = socket_path
        self.timeout = timeout
        self.connection: socket.socket | None = None
        self.reader: Any = None
        self.calls: int | None = None

    def _command(self, *args: str) -> str:
        assert self.connection is not None
        encoded = [arg.encode() for arg in args]
        self.connection.sendall(b"*%d\r\n" % len(encoded) + b"".join(b"$%d\r\n%s\r\n" % (len(a), a) for a in encoded))
        line = self.reader.readline()
        if not line.endswith(b"\r\n"):
            raise ConnectionError("connection closed")
        kind, rest = line[:1], line[1:-2]
        if kind == b"$":
            size = int(rest)
            return "" if size < 0 else self.reader.read(size + 2)[:-2].decode(errors="replace")
        if kind in (b"+", b":"):
            return rest.decode(errors="replace")
        raise ConnectionError(f"server replied {line[:80]!r}")

    def __call__(self) -> bool:
        try:
            if self.connection is None:
                self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                self.connection.settimeout(self.timeout)
                self.connection.connect(self.socket_path)
                self.reader = self.connection.makefile("rb")
                self._command("CLIENT", "SETNAME", self.NAME)
            clients = self._command("CLIENT", "LIST").splitlines()
            stats = self._command("INFO", "commandstats").splitlines()
        except TimeoutError:
            self.close()
            return True  # busy with a long command
        except (OSError, ValueError):
            self.close()
            return False  # gone, or shutting down: the process checks decide
        calls = 0
        for line in stats:  # cmdstat_graph.QUERY:calls=3,usec=...
            name, _, values = line.partition(":")
            command = name.removeprefix("cmdstat_").lower()
            if name.startswith("cmdstat_") and command not in self.OWN and not command.startswith("client"):
                calls += int(values.split(",")[0].removeprefix("calls="))
        ran = self.calls is not None and calls != self.calls
        self.calls = calls
        return ran or any(f" name={self.NAME} " not in f" {client} " for client in clients if client.strip())

    def close(self) -> None:
        for handle in (self.reader, self.connection):
            if handle is not None:
                with contextlib.suppress(OSError):
                    handle.close()
        self.connection = self.reader = None


class _FileActivity:
    """Use read from files a server appends to on every request (the model server's access log): a change of
    size or modification time since the last look."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self.last: list[tuple[int, int] | None] | None = None

    def __call__(self) -> bool:
        now: list[tuple[int, int] | None] = []
        for path in self.paths:
            try:
                stat = path.stat()
                now.append((stat.st_size, stat.st_mtime_ns))
            except OSError:
                now.append(None)
        changed = self.last is not None and now != self.last
        self.last = now
        return changed


@dataclass
class Watch:
    """What a watchdog guards: one server process and the rule that stops it."""

    name: str
    server_pid: int
    owner_file: Path
    """The server's pid or state file, inside its data directory: gone, or naming another process, means the
    data directory was removed (or the server replaced) and the server must stop."""
    idle_timeout: float = 0.0
    """Seconds without use after which the server is stopped; 0 = never."""
    poll: float = DEFAULT_WATCHDOG_POLL
    grace: float = 20.0
    """Seconds between SIGTERM and SIGKILL when stopping the server."""
    redis_socket: str | None = None
    activity_files: list[Path] = field(default_factory=list)
    users_dir: Path | None = None
    pid_file: Path | None = None
    """The watchdog's own pid file, removed when it exits (if it still names this watchdog)."""

    def __post_init__(self) -> None:
        # the watchdog runs in `/`: a relative path would name another file there (and the server be stopped)
        self.owner_file = self.owner_file.absolute()
        self.activity_files = [path.absolute() for path in self.activity_files]
        if self.users_dir is not None:
            self.users_dir = self.users_dir.absolute()
        if self.pid_file is not None:
            self.pid_file = self.pid_file.absolute()

    def argv(self) -> list[str]:
        args = [sys.executable, "-m", WATCHDOG_MODULE, "--name", self.name, "--pid", str(self.server_pid),
                "--owner-file", str(self.owner_file), "--idle-timeout", str(self.idle_timeout),
                "--poll", str(self.poll), "--grace", str(self.grace)]
        if self.redis_socket:
            args += ["--redis-socket", self.redis_socket]
        for path in self.activity_files:
            args += ["--activity-file", str(path)]
        if self.users_dir is not None:
            args += ["--users-dir", str(self.users_dir)]
        if self.pid_file is not None:
            args += ["--pid-file", str(self.pid_file)]
        return args


def _stop_reason(spec: Watch) -> str | None:
    """Why the server must stop now because of its files, or None."""
    try:
        named = named_pid(spec.owner_file)
    except (ValueError, OSError):
        return None  # present but unreadable (being written): look again next time
    if named is None:
        return f"{spec.owner_file} is gone (data directory removed)"
    if named != spec.server_pid:
        return f"{spec.owner_file} names another server (pid {named})"
    return None


def probe_interval(poll: float, idle_timeout: float) -> float:
    """How often the watchdog looks at the server's use: every poll for a short idle timeout, at most once a
    minute (a tenth of the timeout, a poll at least) for a long one. The process and file checks still run every
    poll. Why not more often: the look at a Redis server is commands (CLIENT LIST, INFO), and Redis runs such
    commands even while a command of a MULTI/EXEC block yields (FalkorDB yields when a write waits over
    busy-reply-threshold, 5 s, for the graph's lock, which its fork-based garbage collection holds at scale):
    Redis 8.2 then fails its `!server.in_exec` assertion and the server dies (seen once in ~6 hours of writes
    into a 111k-chunk graph with a look every 5 s; the server restarted and the write unit was redone). A look a
    minute makes that twelve times rarer without changing what an idle timeout of hours means."""
    return max(poll, min(MAX_PROBE_INTERVAL, idle_timeout / 10))


def watch(spec: Watch) -> str:
    """Guard `spec.server_pid` until it exits or must be stopped; returns why the watch ended."""
    started = process_started(spec.server_pid)
    probes: list[Callable[[], bool]] = []
    redis_probe = _RedisActivity(spec.redis_socket) if spec.redis_socket else None
    if redis_probe is not None:
        probes.append(redis_probe)
    if spec.activity_files:
        probes.append(_FileActivity(spec.activity_files))
    if spec.users_dir is not None:
        users_dir = spec.users_dir
        probes.append(lambda: live_users(users_dir) > 0)
    clock = time.monotonic  # idle time: a suspended machine's sleep does not count
    last_use = clock()
    every = probe_interval(spec.poll, spec.idle_timeout)
    last_look = -every
    try:
        while True:
            if started is None or not is_process(spec.server_pid, started):
                return "the server exited"
            reason = _stop_reason(spec)
            if reason is None and spec.idle_timeout > 0 and clock() - last_look >= every:
                last_look = clock()
                # every probe runs each time: each keeps its own "since the last look" state
                if any([probe() for probe in probes]):
                    last_use = clock()
                elif clock() - last_use >= spec.idle_timeout:
                    reason = f"idle for {clock() - last_use:.0f} s (idle_timeout {spec.idle_timeout:g} s)"
            if reason is not None:
                if redis_probe is not None:
                    redis_probe.close()
                log.info("stopping %s (pid %s): %s", spec.name, spec.server_pid, reason)
                terminate(spec.server_pid, spec.grace, started=started)
                with contextlib.suppress(ValueError, OSError):
                    if named_pid(spec.owner_file) == spec.server_pid:
                        spec.owner_file.unlink()
                return reason
            time.sleep(spec.poll)
    finally:
        if redis_probe is not None:
            redis_probe.close()
        if spec.pid_file is not None:
            with contextlib.suppress(ValueError, OSError):
                if named_pid(spec.pid_file) == os.getpid():
                    spec.pid_file.unlink()


def start_watchdog(spec: Watch, *, log_file: Path) -> int:
    """Start the watchdog of a server as a detached process; returns its pid (also written to `spec.pid_file`).

    Its output goes to `log_file` and it holds no descriptor of the caller's (a caller reading a child's
    output to the end must not wait for the watchdog), and it runs in its own session in `/`, so neither the
    caller's terminal nor its working directory is tied to it. Call with the server's start lock held."""
    with open(log_file, "ab") as err:
        process = subprocess.Popen(spec.argv(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                                   start_new_session=True, close_fds=True, cwd="/")
    if spec.pid_file is not None:
        spec.pid_file.write_text(json.dumps({"pid": process.pid, "started": process_started(process.pid)}))
    log.debug("watchdog of %s started (pid %s)", spec.name, process.pid)
    return process.pid


def watchdog_pid(pid_file: Path) -> int | None:
    """The running watchdog a pid file names, if it still runs (a reused pid does not count).

    The file holds the watchdog's pid and start time: its command line cannot identify it, since Linux shows an
    empty one for a moment after the starter's `Popen` returns (the exec is still setting up the new image)."""
    try:
        state = json.loads(pid_file.read_text())
        pid, started = int(state["pid"]), state.get("started")
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pid if is_process(pid, None if started is None else float(started)) else None


def stop_watchdog(pid_file: Path) -> bool:
    """Stop the watchdog a pid file names (before its server is stopped on purpose); whether one was running."""
    pid = watchdog_pid(pid_file)
    with contextlib.suppress(OSError):
        pid_file.unlink()
    return pid is not None and terminate(pid, 5.0)


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m neoweave.watchdog --pid PID --owner-file PATH ...`: run one server's watchdog."""
    parser = argparse.ArgumentParser(prog=f"python -m {WATCHDOG_MODULE}", description=main.__doc__)
    parser.add_argument("--name", default="server")
    parser.add_argument("--pid", type=int, required=True)
    parser.add_argument("--owner-file", type=Path, required=True)
    parser.add_argument("--idle-timeout", type=float, default=0.0)
    parser.add_argument("--poll", type=float, default=DEFAULT_WATCHDOG_POLL)
    parser.add_argument("--grace", type=float, default=20.0)
    parser.add_argument("--redis-socket")
    parser.add_argument("--activity-file", type=Path, action="append", default=[])
    parser.add_argument("--users-dir", type=Path)
    parser.add_argument("--pid-file", type=Path)
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format=f"%(asctime)s watchdog[{os.getpid()}] %(message)s")
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C in the starting terminal is not for us
    spec = Watch(name=args.name, server_pid=args.pid, owner_file=args.owner_file, idle_timeout=args.idle_timeout,
                 poll=args.poll, grace=args.grace, redis_socket=args.redis_socket, activity_files=args.activity_file,
                 users_dir=args.users_dir, pid_file=args.pid_file)
    log.info("watching %s (pid %s; idle_timeout %g s, poll %g s)", spec.name, spec.server_pid, spec.idle_timeout,
             spec.poll)
    log.info("done: %s", watch(spec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
