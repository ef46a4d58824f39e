"""Readers see the graph between write units: a retrieval's statements all read the state before a unit or all the
state after it, across the threads and processes of one data directory.

FalkorDB applies a write unit (one MULTI/EXEC block) or a write statement atomically, but it has no read
transactions: a retrieval runs several statements (seeds, then their links, then their chunks), and a unit of an
`ingest`, `sync` or `enrich` running beside it could land between two of them, so the retrieval would join half
of one state with half of the next (a link followed to a chunk the same unit replaced). The gate is a
readers-writer lock on two lock files of the graph in the data directory: a retrieval holds it shared, each write
unit exclusive, for as long as the unit is sent. A writer that waits shuts the door to new readers (a turnstile),
so a server polled without pause cannot starve an `ingest`; a reader waits at most for the unit being written.
A writer's next unit lets the readers that waited for its last one in first (they hold a third lock file shared
while they wait): a command sending statements back to back would otherwise take the turnstile again before the
woken readers run, and hold them for many units. It waits for them a bounded time, so readers cannot starve it.

Within a process the threads share the file locks: readers count themselves (the first takes the shared lock, the
last releases it), writers take a thread lock first. A thread that already reads reads again without passing the
turnstile (a router retrieving through other strategies), and a write from a thread that reads is not gated (it
could never get the exclusive lock its own read blocks; no retrieval writes).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

READERS_FIRST_WAIT_S = 0.5  # at most this long a writer waits for the readers that waited for its last unit
_POLL_S = 0.002


class SnapshotGate:
    """`reading()` around a reader's statements, `writing()` around each write unit. Without lock files (a FalkorDB
    server the user runs) it gates this process's threads only."""

    def __init__(self, read_lock_file: Path | None = None, turnstile_file: Path | None = None,
                 waiting_file: Path | None = None) -> None:
        if (read_lock_file is None) != (turnstile_file is None) or (turnstile_file is None) != (waiting_file is None):
            raise ValueError("SnapshotGate takes its three lock files (`snapshot_lock_files`) or none")
        self.files = (read_lock_file, turnstile_file, waiting_file)
        self._state = threading.Lock()  # guards the reader counts and the handles
        self._turnstile = threading.Lock()
        self._writer = threading.Lock()
        self._no_readers = threading.Condition(self._state)
        self._readers = 0
        self._waiting = 0  # this process's readers waiting at the turnstile
        self._local = threading.local()
        self._handles: dict[str, IO[str]] = {}
        self._pid = os.getpid()
        self._unusable = read_lock_file is None or turnstile_file is None

    def _handle(self, role: str) -> IO[str] | None:
        """The open lock file for `role` (reads, writes: separate open files, so they exclude each other even
        within one process; turnstile; waiting, and the writer's probe of it), or None when the files cannot be
        used."""
        if self._unusable:
            return None
        if self._pid != os.getpid():  # a forked child opens its own
            self._handles, self._pid = {}, os.getpid()
        if role not in self._handles:
            path = {"turnstile": self.files[1], "waiting": self.files[2], "probe": self.files[2]}.get(role,
                                                                                                   self.files[0])
            try:
                self._handles[role] = open(path, "a+")  # noqa: SIM115  (held for the store's life)
            except OSError as exc:
                log.warning("reads are kept apart from writes within this process only: cannot open %s (%s)",
                            path, exc)
                self._unusable = True
                return None
        return self._handles[role]

    @contextlib.contextmanager
    def _through_turnstile(self) -> Iterator[None]:
        with self._turnstile:
            handle = self._handle("turnstile")
            if handle is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                if handle is not None:
                    fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def _waiting_at_turnstile(self) -> Iterator[None]:
        """Marks this reader as waiting (the first of the process's waiting readers takes the waiting lock shared)
        until `_stop_waiting`, called once it is through the turnstile."""
        with self._state:
            self._waiting += 1
            if self._waiting == 1:
                handle = self._handle("waiting")
                if handle is not None:
                    fcntl.flock(handle, fcntl.LOCK_SH)
        self._local.waits = True
        try:
            yield
        finally:
            if self._local.waits:  # left before it got through (an error)
                with self._state:
                    self._stop_waiting()

    def _stop_waiting(self) -> None:
        """Called with `_state` held."""
        if not getattr(self._local, "waits", False):
            return
        self._local.waits = False
        self._waiting -= 1
        if self._waiting == 0:
            handle = self._handles.get("waiting")
            if handle is not None and self._pid == os.getpid():
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _readers_wait(self) -> bool:
        with self._state:
            if self._waiting:
                return True
        probe = self._handle("probe")
        if probe is None:
            return False
        try:
            fcntl.flock(probe, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(probe, fcntl.LOCK_UN)
        return False

    def _let_waiting_readers_in(self) -> None:
        deadline = time.monotonic() + READERS_FIRST_WAIT_S
        while self._readers_wait() and time.monotonic() < deadline:
            time.sleep(_POLL_S)

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        depth = getattr(self._local, "reads", 0)
        if depth:  # this thread already reads a consistent state
            self._local.reads = depth + 1
            try:
                yield
            finally:
                self._local.reads = depth
            return
        with self._waiting_at_turnstile(), self._through_turnstile(), self._state:
            self._stop_waiting()
            if self._readers == 0:
                handle = self._handle("reads")
                if handle is not None:
                    fcntl.flock(handle, fcntl.LOCK_SH)
            self._readers += 1
        self._local.reads = 1
        try:
            yield
        finally:
            self._local.reads = 0
            with self._state:
                self._readers -= 1
                if self._readers == 0:
                    handle = self._handles.get("reads")
                    if handle is not None and self._pid == os.getpid():
                        fcntl.flock(handle, fcntl.LOCK_UN)
                    self._no_readers.notify_all()

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        if getattr(self._local, "reads", 0) or getattr(self._local, "writes", 0):
            yield  # a write inside this thread's read, or nested in its write unit
            return
        with self._writer:
            self._let_waiting_readers_in()
            with self._through_turnstile():
                with self._state:  # this process's readers first: their shared lock would not stop ours
                    while self._readers:
                        self._no_readers.wait()
                handle = self._handle("writes")
                if handle is not None:
                    fcntl.flock(handle, fcntl.LOCK_EX)
                self._local.writes = 1
                try:
                    yield
                finally:
                    self._local.writes = 0
                    if handle is not None:
                        fcntl.flock(handle, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._pid == os.getpid():
            for handle in self._handles.values():
                handle.close()
        self._handles = {}
