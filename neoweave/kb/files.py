"""What `neoweave backup` and `neoweave export` share on disk: a directory written as a hidden sibling of its
destination and renamed at the end (a killed run leaves nothing at the destination; the next run removes what it
left), files checked by size and sha256, fsync before the rename."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.processes import pid_alive

log = logging.getLogger(__name__)

_PARTIAL = ".partial-"


def partial_dir(dest: Path) -> Path:
    """This process's hidden sibling of `dest` to write into (renamed onto `dest` when complete)."""
    return dest.parent / f".{dest.name}{_PARTIAL}{os.getpid()}"


@contextlib.contextmanager
def staged_directory(dest: Path, what: str) -> Iterator[Path]:
    """A new hidden sibling of `dest` to write into: when the block ends, everything in it is flushed to disk and
    it is renamed onto `dest` (a missing or empty directory: atomic); if the block fails it is removed. Stale
    siblings left by killed runs are removed first (`what`: "backup", "export", for the log)."""
    partial = partial_dir(dest)
    remove_stale_partials(dest, what)
    partial.mkdir(parents=True)
    try:
        yield partial
        fsync(*sorted(partial.rglob("*")), partial)
        os.replace(partial, dest)
        fsync(dest.parent)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise


def remove_stale_partials(dest: Path, what: str) -> None:
    """Hidden partial directories of `dest` left by killed runs (their pid is gone)."""
    with contextlib.suppress(OSError):
        for partial in dest.parent.glob(f".{dest.name}{_PARTIAL}*"):
            pid = partial.name.rpartition(_PARTIAL)[2]
            if pid.isdigit() and not pid_alive(int(pid)):
                log.info("removing %s, left by a killed %s", partial, what)
                shutil.rmtree(partial, ignore_errors=True)


def file_entry(path: Path) -> dict[str, Any]:
    """Size and sha256 of a file, read in full (a flipped byte is found)."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            digest.update(block)
    return {"bytes": path.stat().st_size, "sha256": digest.hexdigest()}


def verify_checksums(src: Path, listed: dict[str, dict[str, Any]], manifest: Path, what: str, hint: str) -> None:
    """Every file `listed` (name -> {bytes, sha256}) is under `src` with that size and sha256, else an error
    naming the file (`what`: "backup", "export")."""
    for name, entry in sorted(listed.items()):
        path = src / name
        if not path.is_file():
            raise NeoweaveError(f"{path} is missing from the {what}")
        found = file_entry(path)
        if found != {"bytes": entry.get("bytes"), "sha256": entry.get("sha256")}:
            raise NeoweaveError(f"{path} does not match its checksum in {manifest} (sha256 {found['sha256']}, "
                                f"{found['bytes']} bytes; expected {entry.get('sha256')}, {entry.get('bytes')} "
                                f"bytes): the {what} is damaged", hint=hint)


def fsync(*paths: Path) -> None:
    """Flush files and directories to disk (best effort: a path that cannot be opened is skipped)."""
    for path in paths:
        with contextlib.suppress(OSError):
            descriptor = os.open(path, os.O_RDONLY)
            try:
                os.fsync(descriptor)
            finally:
                os.close(descriptor)


def neoweave_version() -> str:
    """The installed package's version (the facade `neoweave.__version__` sits above this layer)."""
    try:
        return metadata.version("neoweave")
    except metadata.PackageNotFoundError:
        return "unknown"
