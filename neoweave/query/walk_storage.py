"""The walk index's files: its vectors as rows of append-only files that successive indexes share, and its other
arrays compressed where that pays.

An index numbers nodes by their sorted ids, so one new id moves every row after it; saving the vectors as one
array per index rewrote all of them after every small write (most of the index's bytes). Here a node's number
maps to a slot, a row of a file under the index directory's `vectors/`: an update points the nodes whose vector
did not change at the rows they had and appends only the rows it read, so saving it writes those rows and one
slot per node. Nodes without a vector have no row (slot -1) and read as zeros.

Rows are never written over: a process reading an older index maps the same file and sees the rows its slots
name. When the file holds more than twice the rows in use, a save writes the rows in use to a new file (a new
generation) instead; files no saved index names are removed.
"""

from __future__ import annotations

import fcntl
import io
import logging
import os
import secrets
import time
import zlib
from pathlib import Path
from typing import Any

import numpy as np

log = logging.getLogger(__name__)

DTYPE = np.float32
ABSENT = -1
"""The slot of a node without a vector."""
COMPACT_AT = 2.0
"""A save starts a new file when the current one would hold more than this many times the rows in use."""
COMPACT_MIN_ROWS = 4096
"""Files this small are never compacted."""
KEEP_UNNAMED_SECONDS = 600.0
"""A file no saved index names is removed only when older than this: a build under way elsewhere may use it."""
COMPRESSION_LEVEL = 1
"""zlib's fastest level: padding and repeated values shrink as well at it as at slower ones."""
COMPRESS_FROM_BYTES = 65536
"""Smaller arrays are written as they are."""


class VectorRows:
    """Unit vectors by node number. `slot[n]` is a row of `stored` (the memory-mapped file `file`) when >= 0,
    none when -1, row `-2 - slot[n]` of `added` (read by this build, not saved yet) when <= -2."""

    __slots__ = ("_added", "_count", "dimension", "file", "slot", "stored")

    def __init__(self, slot: np.ndarray, dimension: int, *, stored: np.ndarray | None = None,
                 file: str | None = None, added: np.ndarray | None = None) -> None:
        self.slot = np.asarray(slot, dtype=np.int64)
        self.dimension = dimension
        self.stored = stored
        self.file = file
        self._added = [added] if added is not None else []  # blocks, joined when read
        self._count = sum(len(block) for block in self._added)

    # -- building -------------------------------------------------------------------------------
    @classmethod
    def empty(cls, count: int, dimension: int, previous: VectorRows | None = None) -> VectorRows:
        """`count` nodes without a vector, sharing `previous`'s file (so that `take` can point at its rows)."""
        return cls(np.full(count, ABSENT, dtype=np.int64), dimension,
                   stored=previous.stored if previous is not None else None,
                   file=previous.file if previous is not None else None)

    @classmethod
    def of_matrix(cls, matrix: np.ndarray, present: np.ndarray) -> VectorRows:
        """From dense rows, keeping only those `present`."""
        rows = cls.empty(len(matrix), int(matrix.shape[1]) if matrix.ndim == 2 else 0)
        rows.put(np.flatnonzero(present), np.asarray(matrix, dtype=DTYPE)[present])
        return rows

    def take(self, numbers: np.ndarray, previous: VectorRows, previous_numbers: np.ndarray) -> None:
        """Give `numbers` the vectors `previous` holds at `previous_numbers`: the same stored rows (this set was
        made `empty` with it), the rows it had not saved yet copied."""
        old = previous.slot[previous_numbers]
        stored = old >= 0
        if stored.any():
            if previous.file != self.file:
                raise ValueError("rows taken from another file")
            self.slot[numbers[stored]] = old[stored]
        pending = old <= -2
        if pending.any():
            self.put(numbers[pending], previous.added[-2 - old[pending]])

    def put(self, numbers: np.ndarray, matrix: np.ndarray) -> None:
        """Set the vectors of `numbers` to the rows of `matrix` (added, saved with the index)."""
        if not len(numbers):
            return
        first = self._count
        self._added.append(np.asarray(matrix, dtype=DTYPE).reshape(len(numbers), self.dimension))
        self._count += len(numbers)
        self.slot[numbers] = -2 - np.arange(first, first + len(numbers), dtype=np.int64)

    @property
    def added(self) -> np.ndarray:
        """The rows put since the last save."""
        if len(self._added) != 1:
            self._added = [np.concatenate(self._added) if self._added else np.zeros((0, self.dimension), DTYPE)]
        return self._added[0]

    # -- reading --------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.slot)

    @property
    def shape(self) -> tuple[int, int]:
        return (len(self.slot), self.dimension)

    @property
    def ndim(self) -> int:
        return 2

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(DTYPE)

    @property
    def present(self) -> np.ndarray:
        return self.slot != ABSENT

    def __getitem__(self, numbers: Any) -> np.ndarray:
        single = np.ndim(numbers) == 0
        slots = np.atleast_1d(self.slot[numbers])
        out = np.zeros((len(slots), self.dimension), dtype=DTYPE)
        stored = slots >= 0
        if stored.any():
            out[stored] = self.stored[slots[stored]]  # type: ignore[index]
        added = slots <= -2
        if added.any():
            out[added] = self.added[-2 - slots[added]]
        return out[0] if single else out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        dense = self[np.arange(len(self.slot))]
        return dense if dtype is None else dense.astype(dtype)

    @property
    def nbytes(self) -> int:
        """The slots and the rows in use."""
        return int(self.slot.nbytes + np.count_nonzero(self.slot != ABSENT) * self.dimension * DTYPE().itemsize)

    # -- files ----------------------------------------------------------------------------------
    def save(self, directory: Path, kind: str) -> tuple[VectorRows, dict[str, Any]]:
        """Write the added rows to `directory`'s file for `kind` (appended to the file the stored rows are in
        while it holds few unused rows, else all rows in use to a new one): the rows as saved (memory-mapped, no
        row added) and their manifest entry (file, rows)."""
        directory.mkdir(parents=True, exist_ok=True)
        row_bytes = self.dimension * DTYPE().itemsize
        in_use = self.slot != ABSENT
        with _locked(directory / f"{kind}.lock"):
            path = directory / self.file if self.file else None
            size = _size(path) if path is not None and self.stored is not None else None
            rows_in_file = -(-size // row_bytes) if size is not None and row_bytes else 0  # a torn row is skipped
            live = int(np.count_nonzero(in_use))
            appended = int(np.count_nonzero(self.slot <= -2))
            if size is not None and (rows_in_file + appended <= max(COMPACT_AT * live, COMPACT_MIN_ROWS)):
                slot = self.slot.copy()
                pending = slot <= -2
                order = -2 - slot[pending]
                _write_at(path, rows_in_file * row_bytes, self.added[order])  # type: ignore[arg-type]
                slot[pending] = rows_in_file + np.arange(appended, dtype=np.int64)
                name = self.file
            else:
                name = f"{kind}-{secrets.token_hex(6)}.f32"
                path = directory / name
                slot = np.full(len(self.slot), ABSENT, dtype=np.int64)
                slot[in_use] = np.arange(live, dtype=np.int64)
                with open(path, "wb") as out:
                    for start in range(0, len(self.slot), 65536):  # in pages: a first build holds every row
                        part = np.flatnonzero(in_use[start:start + 65536]) + start
                        out.write(np.ascontiguousarray(self[part]).tobytes())
                    out.flush()
                    os.fsync(out.fileno())
            rows = int(slot.max()) + 1 if len(slot) and slot.max() >= 0 else 0
            stored = _map(path, self.dimension, rows)  # type: ignore[arg-type]  # mapped before another removes it
        return VectorRows(slot, self.dimension, stored=stored, file=name), {"file": name, "rows": rows}

    @classmethod
    def load(cls, directory: Path, entry: dict[str, Any], slot: np.ndarray, dimension: int) -> VectorRows:
        """The rows a manifest entry names, memory-mapped; OSError when the file is gone or short."""
        name = str(entry["file"]) if entry.get("file") else None
        if name is None or "/" in name or name.startswith("."):
            raise OSError(f"no vector file named in the manifest ({name!r})")
        return cls(slot, dimension, stored=_map(directory / name, dimension, int(entry["rows"])), file=name)


def remove_unnamed(directory: Path, named: set[str]) -> None:
    """Remove the vector files no saved index names (kept a while: a build elsewhere may be writing one)."""
    if not directory.is_dir():
        return
    now = time.time()
    for path in directory.glob("*.f32"):
        kind = path.name.rsplit("-", 1)[0]
        try:
            with _locked(directory / f"{kind}.lock"):  # not while a save of its kind writes or maps one
                if path.name not in named and now - path.stat().st_mtime > KEEP_UNNAMED_SECONDS:
                    path.unlink()
        except OSError:
            pass


class _locked:
    """An exclusive lock on a file, for the appends of processes sharing one index directory."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = -1

    def __enter__(self) -> None:
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc: object) -> None:
        fcntl.flock(self.fd, fcntl.LOCK_UN)
        os.close(self.fd)


def _size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:  # removed by another process's compaction: this save starts a new file
        return None


def _write_at(path: Path, offset: int, rows: np.ndarray) -> None:
    fd = os.open(path, os.O_WRONLY)  # never created here: a file removed meanwhile fails this save
    try:
        data = np.ascontiguousarray(rows, dtype=DTYPE).tobytes()
        written = 0
        while written < len(data):
            written += os.pwrite(fd, data[written:], offset + written)
        os.fsync(fd)
    finally:
        os.close(fd)


def _map(path: Path, dimension: int, rows: int) -> np.ndarray:
    """The file's first `rows` rows, memory-mapped read-only (a plain ndarray view: memmap indexing is slower)."""
    if rows == 0 or dimension == 0:
        return np.zeros((0, dimension), dtype=DTYPE)
    if path.stat().st_size < rows * dimension * DTYPE().itemsize:
        raise OSError(f"{path} holds fewer than {rows} rows")
    return np.memmap(path, dtype=DTYPE, mode="r", shape=(rows, dimension)).view(np.ndarray)


def save_array(directory: Path, name: str, array: np.ndarray) -> None:
    """As .npy, or zlib-compressed (.npy.z) when that is at most a third of the bytes: the fixed-width ids are
    mostly padding and the mention counts mostly 1, and every update writes them again."""
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.ascontiguousarray(array), allow_pickle=False)
    data = buffer.getvalue()
    packed = zlib.compress(data, COMPRESSION_LEVEL) if len(data) >= COMPRESS_FROM_BYTES else None
    if packed is not None and len(packed) * 3 <= len(data):
        (directory / f"{name}.npy.z").write_bytes(packed)
    else:
        (directory / f"{name}.npy").write_bytes(data)


def load_array(directory: Path, name: str) -> np.ndarray:
    """The array `save_array` wrote, whichever way."""
    try:
        return np.load(directory / f"{name}.npy", allow_pickle=False)
    except FileNotFoundError:
        data = zlib.decompress((directory / f"{name}.npy.z").read_bytes())
        return np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
