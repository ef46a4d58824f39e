"""A data directory whose store files were removed or damaged is refused with what is missing and what to do,
never served as an empty graph.

Redis starts an empty store when the append-only folder is gone, and when only its manifest is gone it starts
empty and writes new files over the old ones. So the data directory records the graphs its store holds
(`graphs.txt`, a line per graph, added when a graph is first written or first seen) and the embedded server's
files are checked against it: before a start (the folder, its manifest and the files the manifest lists), after a
start that failed (Redis's reason, read from its log: a file it cannot parse, a missing one, a crash while
replaying), and when a store connects (a recorded graph the store no longer holds). A folder removed while the
server runs is written again from the server's memory (`BGREWRITEAOF`), which still holds every graph. A truncated
append-only file (a crash or a full disk mid-write) is loaded up to its last whole write, as Redis does; neoweave
writes in whole units, so the graph is consistent, and the lost tail is reported as a warning.
"""

from __future__ import annotations

import logging
import os
import re
import time
from pathlib import Path
from typing import Any

from neoweave.errors import StoreUnavailable
from neoweave.store.falkordb_paths import ServerPaths

log = logging.getLogger(__name__)

GRAPHS_FILE = "graphs.txt"
MANIFEST = "appendonly.aof.manifest"
_TEMP_MANIFEST = "temp-" + MANIFEST
_EMPTY_BASE_MAX_BYTES = 4096  # an RDB of an empty dataset: its header and aux fields only
_HEADER = (
    "# The graphs this data directory's store holds, one a line (neoweave adds a graph when it is first written).\n"
    "# A graph listed here that the store does not hold means its files in appendonly/ were removed or damaged,\n"
    "# and neoweave refuses to serve it empty. Delete a line only for a graph you deleted on purpose.\n"
)
_STARTING = "Redis is starting"
_LOG_TAIL_BYTES = 1 << 20
_REWRITE_WAIT = 3600.0


class StoreDamaged(StoreUnavailable):
    """The data directory held a graph, and its store files are missing or cannot be loaded."""


def graphs_file(paths: ServerPaths) -> Path:
    return paths.data_dir / GRAPHS_FILE


def recorded_graphs(paths: ServerPaths) -> set[str]:
    """The graphs `graphs.txt` says the store holds (none: a new directory, or one from before it was kept)."""
    try:
        text = graphs_file(paths).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError):
        return set()
    return {line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")}


def record_graph(paths: ServerPaths, name: str) -> None:
    """Add `name` to `graphs.txt` (appended: processes recording at once each add whole lines)."""
    if name in recorded_graphs(paths):
        return
    path = graphs_file(paths)
    try:
        with open(path, "a", encoding="utf-8") as handle:
            handle.write((_HEADER if handle.tell() == 0 else "") + name + "\n")
    except OSError as exc:  # the store works all the same; only this check is lost
        log.warning("could not record graph '%s' in %s: %s", name, path, exc.strerror)


def replace_graphs(paths: ServerPaths, names: set[str] | list[str]) -> None:
    """`graphs.txt` listing exactly `names` (after a restore: the graphs the backup brought)."""
    path = graphs_file(paths)
    staged = path.with_name(f".{GRAPHS_FILE}.{os.getpid()}")
    staged.write_text(_HEADER + "".join(f"{name}\n" for name in sorted(names)), encoding="utf-8")
    staged.replace(path)


def remedy(paths: ServerPaths) -> str:
    return (f"restore a backup with `neoweave restore BACKUP --force`, or delete {paths.data_dir} to start over "
            f"and ingest again (FalkorDB's log: {paths.log_file})")


def _held(paths: ServerPaths) -> str:
    graphs = sorted(recorded_graphs(paths))
    return f" (it held graph {', '.join(repr(g) for g in graphs)})" if graphs else ""


def check_files(paths: ServerPaths) -> None:
    """Before the server starts: refuse when the store's files are not all there. A folder without its manifest
    is refused even in a directory that recorded nothing, since Redis would write over the files it holds."""
    aof, recorded = paths.aof_dir, recorded_graphs(paths)
    problem = None
    if not aof.is_dir():
        problem = f"its append-only folder {aof} is missing" if recorded else None
    elif not (aof / MANIFEST).is_file():
        if not recorded and _unfinished_first_start(aof):
            _clear_unfinished_first_start(aof)
            return
        files = sorted(p.name for p in aof.iterdir())
        if files:
            problem = (f"{aof / MANIFEST} is missing (the folder holds {', '.join(files[:5])}; starting on it would "
                       "write an empty store over them)")
        elif recorded:
            problem = f"its append-only folder {aof} is empty"
    else:
        missing = [name for name in _manifest_files(aof / MANIFEST) if not (aof / name).is_file()]
        if missing:
            problem = f"{', '.join(str(aof / name) for name in missing)}, listed in {aof / MANIFEST}, is missing"
    if problem:
        raise StoreDamaged(f"the store in {paths.data_dir} cannot be opened{_held(paths)}: {problem}",
                           hint=remedy(paths))


def _unfinished_first_start(aof: Path) -> bool:
    """Whether the folder holds only what a server's first start writes before its manifest is in place: a base
    file of an empty dataset (or the temporary file it is written to), empty incremental files and the temporary
    manifest. A server stopped there never accepted a write (writes wait for the start to finish)."""
    for path in aof.iterdir():
        if not path.is_file():
            return False
        name = path.name
        if name == _TEMP_MANIFEST or (name.endswith(".incr.aof") and path.stat().st_size == 0):
            continue
        if (name.endswith(".base.rdb") or name.startswith("temp-rewriteaof-")) and _holds_no_keys(path):
            continue
        return False
    return True


def _holds_no_keys(path: Path) -> bool:
    """Whether an RDB file (or the start of one) holds nothing but its header and aux fields: no database opcode,
    no key, before its end marker or the end of the bytes written."""
    if path.stat().st_size > _EMPTY_BASE_MAX_BYTES:
        return False
    data = path.read_bytes()
    if not data.startswith(b"REDIS"):
        return False
    reader = _RdbReader(data, 9)
    try:
        while reader.more():
            opcode = reader.byte()
            if opcode == 0xFF:  # end of the file
                return True
            if opcode == 0xFA:  # aux field: name, value
                reader.string()
                reader.string()
            elif opcode == 0xF7:  # module aux: module id, when (as a typed value), then typed values up to 0
                reader.length()
                reader.module_values()
            else:  # a database, a key: data
                return False
    except IndexError:  # cut short while writing its header: no key had been written
        return True
    except ValueError:  # a field this reader does not know: not shown to be empty
        return False
    return True


class _RdbReader:
    """Just enough of the RDB format to walk a file's header fields."""

    def __init__(self, data: bytes, position: int) -> None:
        self.data, self.position = data, position

    def more(self) -> bool:
        return self.position < len(self.data)

    def byte(self) -> int:
        value = self.data[self.position]
        self.position += 1
        return value

    def take(self, count: int) -> bytes:
        if self.position + count > len(self.data):
            raise IndexError("cut short")
        chunk = self.data[self.position:self.position + count]
        self.position += count
        return chunk

    def _encoded_length(self) -> tuple[int, bool]:
        first = self.byte()
        kind = first >> 6
        if kind == 0:
            return first & 0x3F, False
        if kind == 1:
            return ((first & 0x3F) << 8) | self.byte(), False
        if kind == 3:
            return first & 0x3F, True
        return int.from_bytes(self.take(4 if first == 0x80 else 8), "big"), False

    def length(self) -> int:
        return self._encoded_length()[0]

    def string(self) -> None:
        size, special = self._encoded_length()
        if not special:
            self.take(size)
        elif size == 3:  # LZF: compressed length, plain length, the compressed bytes
            compressed = self.length()
            self.length()
            self.take(compressed)
        else:  # an integer of 1, 2 or 4 bytes
            self.take({0: 1, 1: 2, 2: 4}[size])

    def module_values(self) -> None:
        while (kind := self.length()) != 0:
            if kind in (1, 2):
                self.length()
            elif kind == 3:
                self.take(4)
            elif kind == 4:
                self.take(8)
            elif kind == 5:
                self.string()
            else:
                raise ValueError(f"unknown module value type {kind}")


def _clear_unfinished_first_start(aof: Path) -> None:
    names = sorted(p.name for p in aof.iterdir())
    log.warning("the store in %s was stopped during its first start (%s hold no data and no manifest); starting "
                "it afresh", aof, ", ".join(names))
    for name in names:
        (aof / name).unlink()


def _manifest_files(manifest: Path) -> list[str]:
    """The file names a multi-part AOF manifest lists (`file NAME seq N type T` lines)."""
    names = []
    for line in manifest.read_text(encoding="utf-8", errors="replace").splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] == "file":
            names.append(words[1].strip('"'))
    return names


def _latest_start(log_file: Path) -> str:
    """The server log from its latest start on ("" without a log)."""
    try:
        with open(log_file, "rb") as handle:
            handle.seek(max(0, handle.seek(0, os.SEEK_END) - _LOG_TAIL_BYTES))
            tail = handle.read().decode(errors="replace")
    except FileNotFoundError:
        return ""
    start = tail.rfind(_STARTING)
    return tail[start:] if start >= 0 else tail


_FAILURES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"Bad file format reading the append only file (\S+?):"), "{aof}/{0} is damaged: FalkorDB cannot "
                                                                          "parse it"),
    (re.compile(r"Unable to obtain the AOF file (\S+) length"), "{aof}/{0}, listed in its manifest, is missing"),
    (re.compile(r"Short read or OOM loading DB"), "a base file in {aof} is truncated or damaged"),
    (re.compile(r"# (.*[Mm]anifest.*)"), "its manifest is damaged: {0}"),
    (re.compile(r"Diverged applying \S+ on graph '([^']*)' while loading"), "FalkorDB could not replay a write to "
                                                                           "graph '{0}' while loading {aof}: a "
                                                                           "file there is damaged"),
    (re.compile(r"crashed by signal: (\d+)"), "FalkorDB crashed (signal {0}) while loading {aof}: a file there is "
                                              "damaged"),
)


def load_failure(paths: ServerPaths) -> str | None:
    """Why the latest start could not load the store, as its log says (None: not a failure to load it)."""
    section = _latest_start(paths.log_file)
    if "module data for the module 'graph'" in section or "DB loaded from append only file" in section:
        return None  # another FalkorDB's store (its own hint), or it loaded and failed later
    for pattern, text in _FAILURES:
        found = pattern.search(section)
        if found:
            return text.format(*found.groups(), aof=paths.aof_dir)
    return None


def refuse_load_failure(paths: ServerPaths) -> None:
    """After a start that did not become ready: the error naming the damaged store, when that is why."""
    damage = load_failure(paths)
    if damage:
        raise StoreDamaged(f"the store in {paths.data_dir} cannot be opened{_held(paths)}: {damage}",
                           hint=remedy(paths))


def warn_if_truncated(paths: ServerPaths) -> None:
    """After a start: say so when Redis dropped a truncated tail of an append-only file to load it."""
    found = re.search(r"Truncating the AOF (\S+) at offset (\d+)", _latest_start(paths.log_file))
    if found:
        log.warning("the store's append-only file %s/%s ended mid-write (a crash or a full disk): FalkorDB loaded it "
                    "up to byte %s and dropped the rest. neoweave writes whole units, so the graph is as it was "
                    "before the last write; `neoweave check` checks it", paths.aof_dir, found[1], found[2])


def check_graph(paths: ServerPaths, client: Any, name: str) -> None:
    """When a store connects to the running server: a graph `graphs.txt` lists and the store lacks is refused; one
    it holds and the file does not list yet is added. An append-only folder removed while the server ran is
    written again from the server's memory first."""
    if not paths.aof_dir.is_dir():
        _rewrite(paths, client)
    held = bool(client.exists(name))
    if held:
        record_graph(paths, name)
    elif name in recorded_graphs(paths):
        raise StoreDamaged(
            f"the store in {paths.data_dir} no longer holds graph '{name}', which it held ({graphs_file(paths)} "
            f"lists it): the files in {paths.aof_dir} were removed or replaced", hint=remedy(paths))


def _rewrite(paths: ServerPaths, client: Any) -> None:
    log.warning("the append-only folder %s was removed while the server ran; writing it again from the server's "
                "memory (BGREWRITEAOF)", paths.aof_dir)
    client.execute_command("BGREWRITEAOF")
    deadline = time.monotonic() + _REWRITE_WAIT
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not info.get("aof_rewrite_in_progress") and not info.get("aof_rewrite_scheduled"):
            if info.get("aof_last_bgrewrite_status") != "ok" or not paths.aof_dir.is_dir():
                raise StoreDamaged(f"the append-only folder {paths.aof_dir} was removed while the server ran, and "
                                   "writing it again failed", hint=f"back the graph up now with `neoweave backup "
                                                                   f"DEST` (see {paths.log_file})")
            return
        time.sleep(0.1)
