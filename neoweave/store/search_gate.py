"""One vector search at a time per FalkorDB server, across the threads and processes of one data directory.

FalkorDB answers HNSW queries that overlap in time wrongly: duplicated nodes displace true neighbours
(FalkorDB/FalkorDB#2848, open; 4.16.3 and 4.22.1 alike, benchmarks/falkordb_concurrent_search.py). A thread lock
serialises one process's searches; the embedded server's data directory also holds a lock file, so the HTTP
server, an MCP server and a CLI query on one data directory take turns too. A search holds the gate 1-2 ms.
"""

from __future__ import annotations

import fcntl
import logging
import os
import threading
from pathlib import Path
from types import TracebackType
from typing import IO

log = logging.getLogger(__name__)


class SearchGate:
    """A context manager: a thread lock, then (when `lock_file` is given and can be opened) an exclusive
    `flock` on it. Without a lock file (a FalkorDB server the user runs: its processes cannot be known) only
    this process's searches are serialised."""

    def __init__(self, lock_file: Path | None = None) -> None:
        self.lock_file = lock_file
        self._thread_lock = threading.Lock()
        self._handle: IO[str] | None = None
        self._pid: int | None = None  # the process that opened the handle (a forked child opens its own)
        self._unusable = False

    def _file(self) -> IO[str] | None:
        if self.lock_file is None or self._unusable:
            return None
        if self._handle is None or self._pid != os.getpid():
            try:
                self._handle = open(self.lock_file, "a+")  # noqa: SIM115  (held for the store's life)
            except OSError as exc:  # a read-only data directory: other processes cannot write it either
                log.warning("vector searches are serialised within this process only: cannot open %s (%s)",
                            self.lock_file, exc)
                self._unusable = True
                return None
            self._pid = os.getpid()
        return self._handle

    def __enter__(self) -> SearchGate:
        self._thread_lock.acquire()
        try:
            handle = self._file()
            if handle is not None:
                fcntl.flock(handle, fcntl.LOCK_EX)
        except BaseException:
            self._thread_lock.release()
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        try:
            if self._handle is not None and self._pid == os.getpid():
                fcntl.flock(self._handle, fcntl.LOCK_UN)
        finally:
            self._thread_lock.release()

    def close(self) -> None:
        if self._handle is not None and self._pid == os.getpid():
            self._handle.close()
        self._handle = None
