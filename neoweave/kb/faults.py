"""Faults as a user meets them: the embedded store or the local model server killed in the middle of a command,
and the disk of the data directory (or of a backup) filling up. Each is applied to a real `neoweave` command in a
subprocess; the command must then fail with one clear line (or finish, when it could recover), and the same
command run again must complete with the graph a clean run gives (`neoweave.audit.snapshot.diff`, as the
rebuild check compares). `tests/test_faults.py` runs each once; `benchmarks/faults.py` counts them over many
repetitions.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from neoweave.processes import pid_alive
from neoweave.watchdog import named_pid

PidOf = Callable[[], "int | None"]


@dataclass(frozen=True)
class Run:
    """A finished `neoweave` command: its exit status, what it printed on stderr, and its wall time."""

    returncode: int
    stderr: str
    seconds: float
    kills: int = 0
    """How many times the fault was applied while it ran (0: it finished first)."""

    @property
    def message(self) -> str:
        """The error line (with its hint) the command ended with, or ''."""
        lines = [line.strip() for line in self.stderr.strip().splitlines() if line.strip()]
        for index in range(len(lines) - 1, -1, -1):
            if lines[index].startswith("error:"):
                return " ".join(lines[index:index + 2]) if index + 1 < len(lines) else lines[index]
        return ""

    @property
    def clear(self) -> bool:
        """Failed with neoweave's own one-line error: no traceback, and not the fallback that names only an
        exception class and asks for --debug (a failure nobody anticipated)."""
        return (self.returncode != 0 and "Traceback" not in self.stderr and bool(self.message)
                and "rerun with --debug" not in self.message)


def argv(data_dir: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), *args]


def command_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment of a faulted command: the caller's, quiet logs, plus `extra`."""
    return {**os.environ, "NEOWEAVE_LOG_LEVEL": "WARNING", **(extra or {})}


def run(data_dir: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 1800) -> Run:
    started = time.monotonic()
    result = subprocess.run(argv(data_dir, *args), capture_output=True, text=True, env=command_env(env),
                            timeout=timeout)
    return Run(result.returncode, result.stderr, time.monotonic() - started)


def store_pid(data_dir: Path) -> PidOf:
    """The pid of the data directory's embedded FalkorDB server, as its pid file names it (None: not running)."""
    def pid() -> int | None:
        with contextlib.suppress(ValueError, OSError):
            found = named_pid(Path(data_dir) / "falkordb.pid")
            return found if found is not None and pid_alive(found) else None
        return None
    return pid


def llm_pid(data_dir: Path, model: str) -> PidOf:
    """The pid of the data directory's local model server for `model`, as its state file names it."""
    def pid() -> int | None:
        with contextlib.suppress(ValueError, OSError):
            found = named_pid(Path(data_dir) / "llm" / f"{model}.json")
            return found if found is not None and pid_alive(found) else None
        return None
    return pid


def run_killing(data_dir: Path, args: Sequence[str], target: PidOf, *, delay: float, kills: int = 1,
                env: dict[str, str] | None = None, timeout: float = 1800) -> Run:
    """Run `neoweave ARGS` and SIGKILL the process `target` names `delay` seconds after it first runs (and,
    with `kills` > 1, each later process it names: a restarted server), while the command runs."""
    started = time.monotonic()
    process = subprocess.Popen(argv(data_dir, *args), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True, env=command_env(env), start_new_session=True)
    done, first_seen, killed = 0, None, set[int]()
    try:
        while process.poll() is None and done < kills and time.monotonic() - started < timeout:
            pid = target()
            if pid is not None and pid not in killed:
                first_seen = first_seen or time.monotonic()
                if time.monotonic() - first_seen >= (delay if done == 0 else 0.5):
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGKILL)
                        killed.add(pid)
                        done += 1
            time.sleep(0.02)
        _, err = process.communicate(timeout=max(1.0, timeout - (time.monotonic() - started)))
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        _, err = process.communicate()
    return Run(process.returncode, err, time.monotonic() - started, done)


def stop_servers(data_dir: Path) -> None:
    """Stop the store and local model servers of a data directory (the faulted commands leave them running)."""
    from neoweave.llm.local import stop_local_servers
    from neoweave.store.falkordb_server import EmbeddedFalkorDB

    with contextlib.suppress(Exception):
        stop_local_servers(Path(data_dir))
    with contextlib.suppress(Exception):
        EmbeddedFalkorDB(Path(data_dir)).stop()


def mount_refusal() -> str:
    """Why a small tmpfs cannot be mounted here ('' when it can): mounting needs root (or CAP_SYS_ADMIN)."""
    if shutil.which("mount") is None:
        return "no mount command"
    with tempfile.TemporaryDirectory() as probe:
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", probe], capture_output=True,
                                text=True)
        if result.returncode != 0:
            return f"mounting a tmpfs is not permitted here: {result.stderr.strip()[:200]}"
        subprocess.run(["umount", probe], capture_output=True)
    return ""


@contextlib.contextmanager
def small_disk(path: Path, size_kb: int) -> Iterator[Path]:
    """A tmpfs of `size_kb` KiB mounted at `path`: a disk that fills. The servers of a data directory inside it
    are stopped and it is unmounted when the block ends, whatever happens."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)], check=True,
                   capture_output=True)
    try:
        yield path
    finally:
        for pid_file in path.rglob("falkordb.pid"):
            stop_servers(pid_file.parent)
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)  # a process still holds a file


def disk_use_kb(directory: Path) -> int:
    """The KiB the files of a directory take on a tmpfs (whole 4 KiB pages)."""
    return sum(-(-path.stat().st_size // 4096) * 4 for path in Path(directory).rglob("*") if path.is_file())


def resize_disk(path: Path, size_kb: int) -> None:
    """Grow (or shrink) the tmpfs at `path`, as a user freeing space would."""
    subprocess.run(["mount", "-o", f"remount,size={size_kb}k", str(path)], check=True, capture_output=True)


def differences(data_dir: Path, reference: Path) -> list[str]:
    """What differs between the graphs of two data directories (empty: the same graph)."""
    from neoweave.audit.snapshot import diff, snapshot
    from neoweave.kb.opening import open_kb

    shots = []
    for directory in (data_dir, reference):
        with open_kb(directory, read_only=True) as kb:
            shots.append(snapshot(kb.store))
    return diff(*shots)


def copy_data_dir(source: Path, target: Path) -> Path:
    """A copy of a data directory with its server stopped (the copy starts its own)."""
    stop_servers(source)
    if target.exists():
        stop_servers(target)
        shutil.rmtree(target)
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("*.sock", "*.pid", "*.lock", "llm"))
    return target
