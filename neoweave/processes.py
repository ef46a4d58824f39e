"""Process hygiene: helpers for the processes neoweave starts (the servers' watchdog is `neoweave.watchdog`).

Two kinds of process outlive a careless parent unless told otherwise:

- Worker processes (the fast extractor's spaCy pool) must die with their parent, also when the parent is
  killed with SIGKILL and has no chance to stop them: `die_with_parent` (in the worker) asks Linux for
  SIGKILL when the parent goes (`PR_SET_PDEATHSIG`) and, everywhere, watches `os.getppid()` from a daemon
  thread. Such pools are spawned through `call_in_lifetime_thread`, because Linux sends the parent-death
  signal when the *thread* that forked the child ends, not the process.
- The embedded FalkorDB server and the local model server outlive commands on purpose (the next command
  reuses them). Each gets a watchdog (`python -m neoweave.watchdog`, started by `start_watchdog`) that
  stops its server when the server's data directory is removed (its pid or state file is gone) or when the
  server has been idle for `idle_timeout` seconds, and that exits itself when the server exits.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import logging
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def pid_alive(pid: int) -> bool:
    """Whether `pid` runs. A zombie (killed but not yet reaped) answers kill(0) yet counts as dead."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def process_started(pid: int) -> float | None:
    """When process `pid` started (seconds since the epoch, as psutil reports it), or None if it is gone.

    A pid and its start time name one process: a pid alone may have been reused by the time it is checked."""
    import psutil

    try:
        return float(psutil.Process(pid).create_time())
    except (psutil.NoSuchProcess, psutil.ZombieProcess):
        return None
    except psutil.AccessDenied:  # another user's process: alive, start time unknown
        return 0.0


def is_process(pid: int, started: float | None) -> bool:
    """Whether `pid` is still the process that started at `started` (any process with that pid if None)."""
    if not pid_alive(pid):
        return False
    if started is None:
        return True
    now = process_started(pid)
    # psutil adds the boot time, which the kernel reports to the second and may shift by one when the clock is
    # adjusted: two readings of one process's start may differ by a second, a reused pid's by much more
    return now is not None and (now == 0.0 or abs(now - started) < 1.5)


def _reap(pid: int) -> None:
    """Collect `pid`'s exit status if it is our child, so it does not linger as a zombie."""
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)


def _wait_gone(pid: int, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        _reap(pid)
        if not pid_alive(pid):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def terminate(pid: int, grace: float = 10.0, *, started: float | None = None) -> bool:
    """SIGTERM, then SIGKILL if the process is still there after `grace` seconds (a server gets the chance to
    flush its files first). Returns whether the process was running; `started` guards against a reused pid."""
    if not is_process(pid, started):
        return False
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return False
    if not _wait_gone(pid, grace):
        log.warning("pid %s did not stop in %.0f s; killing it", pid, grace)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        _wait_gone(pid, 5.0)
    return True


# -- a command stopped by SIGTERM -----------------------------------------------------------------------------

class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the process is (as Ctrl-C raises KeyboardInterrupt), so that a command stopped by a
    supervisor, `kill` or a closing terminal runs its `finally` blocks and context managers as on Ctrl-C: the
    files it announced itself with (`serve.json`) go, a write stops where it can be continued."""


_sigterm_received = False


def _raise_terminated(signum: int, frame: object) -> None:
    global _sigterm_received
    _sigterm_received = True
    raise Terminated()


def raise_on_sigterm() -> None:
    """Make SIGTERM raise `Terminated` in the main thread (call from the main thread, at the command's start)."""
    signal.signal(signal.SIGTERM, _raise_terminated)


def sigterm_received() -> bool:
    """Whether this process was sent SIGTERM since `raise_on_sigterm` (typer turns any interrupt into exit 130,
    so the exception's type alone does not tell)."""
    return _sigterm_received


# -- workers that die with their parent ----------------------------------------------------------------------

def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Ask Linux to send `sig` to this process when its parent thread ends (`prctl(PR_SET_PDEATHSIG)`); False
    where that is not available (other systems: `die_with_parent`'s watcher thread covers them)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        return libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with_parent(parent_pid: int, *, poll: float = 0.5, death_signal: bool = True) -> None:
    """Make this (worker) process exit when `parent_pid`, its parent, is gone, even after a SIGKILL of the parent.

    Call it first thing in the worker. `death_signal` sets `PR_SET_PDEATHSIG` (immediate, Linux): only right
    when the parent forked this process from a thread that lives as long as the parent (see
    `call_in_lifetime_thread`). A daemon thread also checks `os.getppid()` every `poll` seconds: an orphan is
    re-parented (to init or a subreaper), so its parent pid changes; this works everywhere. The parent may
    already be gone when the worker starts (before the death signal was set, nothing would be sent): then the
    parent pid has already changed and the worker exits at once.
    """
    if death_signal:
        set_parent_death_signal(signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)  # the parent died before the death signal was armed

    def watch() -> None:
        while True:
            time.sleep(poll)
            if os.getppid() != parent_pid:
                os._exit(1)  # no cleanup to do: the parent that wanted the results is gone

    threading.Thread(target=watch, name="neoweave-parent-watch", daemon=True).start()


_lifetime: tuple[threading.Thread, queue.SimpleQueue] | None = None
_lifetime_lock = threading.Lock()
_fork_hook_registered = False


def _forget_lifetime_thread() -> None:
    global _lifetime
    _lifetime = None  # a forked child has no copy of the thread


def _lifetime_loop(tasks: queue.SimpleQueue) -> None:
    while True:
        function, future = tasks.get()
        if future.set_running_or_notify_cancel():
            try:
                future.set_result(function())
            except BaseException as exc:  # handed to the caller
                future.set_exception(exc)


def call_in_lifetime_thread(function: Callable[[], T]) -> T:
    """`function()`, run in a daemon thread that lives as long as this process.

    Linux sends `PR_SET_PDEATHSIG` when the thread that forked a child ends, not the process: workers spawned
    from a short-lived thread (the enrich runner's extraction thread) would be killed with it while their
    parent process runs on. Spawning them here ties the signal to the process's death."""
    global _lifetime, _fork_hook_registered
    with _lifetime_lock:
        if _lifetime is None:
            tasks: queue.SimpleQueue = queue.SimpleQueue()
            thread = threading.Thread(target=_lifetime_loop, args=(tasks,), name="neoweave-spawner", daemon=True)
            thread.start()
            if not _fork_hook_registered:
                os.register_at_fork(after_in_child=_forget_lifetime_thread)
                _fork_hook_registered = True
            _lifetime = (thread, tasks)
        thread, tasks = _lifetime
    if threading.current_thread() is thread:
        return function()
    future: Future = Future()
    tasks.put((function, future))
    return future.result()
