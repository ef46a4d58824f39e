"""Readers see the graph between write units: a retrieval's statements all read the state before a unit or all the
state after it, across the threads and processes of one data directory.

FalkorDB applies a write unit (one MULTI/EXEC block) or a write statement atomically, but it has no read
transactions: a retrieval runs several statements (seeds, then their links, then their chunks), and a unit of an
`ingest`, `sync` or `enrich` running beside it could land between two of them, so the retrieval would join half
of one state with half of the next (a link followed to a chunk the same unit replaced). The gate is a
readers-writer lock on two lock files of the graph in the data directory: a retrieval holds it shared, each write
unit exclusive, for as long as the unit is sent. A writer that waits shuts the door to new readers (a turnstile),
so a server polled without pause cannot starve an `ingest`; a reader waits at most for the unit being written.

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
from collections.abc import Iterator
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)


class SnapshotGate:
    """`reading()` around a reader's statements, `writing()` around each write unit. Without lock files (a FalkorDB
    server the user runs) it gates this process's threads only."""

    def __init__(self, read_lock_file: Path | None = None, turnstile_file: Path | None = None) -> None:
        self.files = (read_lock_file, turnstile_file)
        self._state = threading.Lock()  # guards the reader count and the handles
        self._turnstile = threading.Lock()
        self._writer = threading.Lock()
        self._no_readers = threading.Condition(self._state)
        self._readers = 0
        self._local = threading.local()
        self._handles: dict[str, IO[str]] = {}
        self._pid = os.getpid()
        self._unusable = read_lock_file is None or turnstile_file is None

    def _handle(self, role: str) -> IO[str] | None:
        """The open lock file for `role` (reads, writes: separate open files, so they exclude each other even
        within one process; turnstile), or None when the files cannot be used."""
        if self._unusable:
            return None
        if self._pid != os.getpid():  # a forked child opens its own
            self._handles, self._pid = {}, os.getpid()
        if role not in self._handles:
            path = self.files[1] if role == "turnstile" else self.files[0]
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
    def reading(self) -> Iterator[None]:
        depth = getattr(self._local, "reads", 0)
        if depth:  # this thread already reads a consistent state
            self._local.reads = depth + 1
            try:
                yield
            finally:
                self._local.reads = depth
            return
        with self._through_turnstile(), self._state:
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
        with self._writer, self._through_turnstile():
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
