"""`neoweave backup` / `neoweave restore` against the real embedded FalkorDB and the real embedding model: a backup
taken while the server serves restores, into a fresh data directory and over a changed one, to exactly the graph of
the moment of the backup; damaged backups are refused before anything changes."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path

from conftest import COMMUNITY_CORPUS
from falkordb import FalkorDB

from neoweave.llm.store import LLMDatabase
from neoweave.processes import pid_alive

QUESTION = "Who married Teutberga in Aachen?"


def _state(cli, *options: str) -> tuple:
    """Counts per label and type, the Meta node, and the chunks a naive query returns (in order)."""
    status = json.loads(cli(*options, "status", "--json").stdout)
    found = json.loads(cli(*options, "query", QUESTION, "-s", "naive", "--k", "3", "--json", "--no-server").stdout)
    return status["nodes"], status["relationships"], status["meta"], [item["chunk_id"] for item in found["items"]]


def _counts(cli, *options: str) -> tuple:
    status = json.loads(cli(*options, "status", "--json").stdout)
    return status["nodes"], status["relationships"]


def _server_pid(data_dir: Path) -> int:
    return int((data_dir / "falkordb.pid").read_text())


def _ingest(cli, workdir: Path, records: list[dict]) -> None:
    (workdir / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    cli("ingest", "corpus.jsonl", "--no-progress")


def test_backup_while_serving_then_restore_fresh_and_over_a_changed_store(cli, workdir):
    _ingest(cli, workdir, COMMUNITY_CORPUS)
    cli("enrich", "kg", "--no-progress", "-P", "n_process=1")
    cache = LLMDatabase(workdir / ".neoweave" / "llm.sqlite")
    cache.put_response("k", "m", {"text": "cached answer"})
    before = _state(cli)
    assert before[0]["Entity"] > 0 and before[3]
    pid = _server_pid(workdir / ".neoweave")

    dead = subprocess.Popen(["true"])
    dead.wait()
    (workdir / f".bk.partial-{dead.pid}" / "falkordb.rdb").mkdir(parents=True)  # what a killed backup leaves
    out = cli("backup", "bk").stdout  # the server runs, and the cache's connection is open
    cache.close()
    assert "backup written to bk" in out and "snapshot forked" in out
    assert _server_pid(workdir / ".neoweave") == pid and pid_alive(pid)  # never stopped
    manifest = json.loads((workdir / "bk" / "backup.json").read_text())
    graph = manifest["graphs"]["neoweave"]
    assert (graph["nodes"], graph["relationships"], graph["meta"]) == before[:3]
    assert manifest["embedding_model"] == "all-MiniLM-L6-v2" and manifest["schema_version"] == before[2][
        "schema_version"] and graph["constraints"] and graph["indexes"]
    assert set(manifest["files"]) == {"falkordb.rdb", "llm.sqlite"}
    for name, entry in manifest["files"].items():
        assert hashlib.sha256((workdir / "bk" / name).read_bytes()).hexdigest() == entry["sha256"]
    assert sorted(p.name for p in workdir.iterdir() if p.name.startswith(".bk")) == []  # no partial left

    cli("delete", "k1")
    changed = _state(cli)
    assert changed[0]["Document"] == before[0]["Document"] - 1

    cli("--data-dir", "fresh", "restore", "bk")
    assert _state(cli, "--data-dir", "fresh") == before
    cli("--data-dir", "fresh", "delete", "k2")  # the restored store takes writes, and keeps them over a restart
    cli("--data-dir", "fresh", "server", "stop")
    assert _counts(cli, "--data-dir", "fresh")[0]["Document"] == before[0]["Document"] - 1
    assert LLMDatabase(workdir / "fresh" / "llm.sqlite").get_response("k") == {"text": "cached answer"}

    refused = cli("restore", "bk", check=False)
    assert refused.returncode == 1 and "already holds graph 'neoweave'" in refused.stderr
    assert "--force" in refused.stderr and _server_pid(workdir / ".neoweave") == pid
    assert _state(cli) == changed

    saved = workdir / ".neoweave" / "derived" / "neoweave" / "resolution" / "state.sqlite"
    assert saved.exists()  # the rows entity resolution read, saved by enrich kg
    cli("restore", "bk", "--force")
    assert _state(cli) == before
    assert not saved.exists()  # of a later state than the restored graph: the next kg run reads every entity
    assert _server_pid(workdir / ".neoweave") != pid  # stopped, then started on the restored files
    # ppr's walk index, saved here since enrich kg, is rebuilt for the restored graph (not part of a backup)
    assert json.loads(cli("status", "--json").stdout)["walk_index"]["current"]
    assert not (workdir / "bk" / "derived").exists()

    again = cli("backup", "bk", check=False)
    assert again.returncode == 1 and f"{workdir / 'bk'} exists and is not empty" in again.stderr
    (workdir / "empty").mkdir()
    lean = json.loads(cli("backup", "empty", "--no-llm-cache", "--json").stdout)
    assert set(lean["files"]) == {"falkordb.rdb"} and lean["graphs"]["neoweave"]["nodes"] == before[0]


def test_damaged_backups_are_refused_and_change_nothing(cli, workdir):
    _ingest(cli, workdir, COMMUNITY_CORPUS[:3])
    cli("backup", "bk")
    cli("delete", "k1")
    changed = _counts(cli)
    pid = _server_pid(workdir / ".neoweave")

    shutil.copytree(workdir / "bk", workdir / "flipped")
    rdb = workdir / "flipped" / "falkordb.rdb"
    data = bytearray(rdb.read_bytes())
    data[len(data) // 2] ^= 0x01
    rdb.write_bytes(bytes(data))
    for options in ((), ("--data-dir", "fresh")):
        refused = cli(*options, "restore", "flipped", "--force", check=False)
        assert refused.returncode == 1 and f"{rdb} does not match its checksum" in refused.stderr
    assert not (workdir / "fresh").exists()
    assert _server_pid(workdir / ".neoweave") == pid and _counts(cli) == changed

    shutil.copytree(workdir / "bk", workdir / "nomanifest")
    (workdir / "nomanifest" / "backup.json").unlink()
    refused = cli("restore", "nomanifest", "--force", check=False)
    assert refused.returncode == 1 and f"{workdir / 'nomanifest' / 'backup.json'} is missing" in refused.stderr
    shutil.copytree(workdir / "bk", workdir / "torn")
    (workdir / "torn" / "backup.json").write_text('{"format": 1, "backend": "falk')
    refused = cli("restore", "torn", "--force", check=False)
    assert refused.returncode == 1 and f"{workdir / 'torn' / 'backup.json'} is corrupt" in refused.stderr
    assert _server_pid(workdir / ".neoweave") == pid and _counts(cli) == changed

    # a manifest that lies about the counts: the snapshot goes in, fails the check, and the old store comes back
    shutil.copytree(workdir / "bk", workdir / "lying")
    manifest = json.loads((workdir / "lying" / "backup.json").read_text())
    manifest["graphs"]["neoweave"]["nodes"]["Chunk"] += 1
    (workdir / "lying" / "backup.json").write_text(json.dumps(manifest))
    refused = cli("restore", "lying", "--force", check=False)
    assert refused.returncode == 1 and "does not hold what the backup's manifest says" in refused.stderr
    assert "the previous store was put back" in refused.stderr
    assert _counts(cli) == changed

    # a snapshot damaged before its checksum was taken: the server refuses to load it, and the old store comes back
    shutil.copytree(workdir / "flipped", workdir / "unloadable")
    manifest = json.loads((workdir / "unloadable" / "backup.json").read_text())
    manifest["files"]["falkordb.rdb"]["sha256"] = hashlib.sha256(rdb.read_bytes()).hexdigest()
    (workdir / "unloadable" / "backup.json").write_text(json.dumps(manifest))
    refused = cli("restore", "unloadable", "--force", check=False)
    assert refused.returncode == 1 and "the server did not start on the snapshot" in refused.stderr
    assert "the previous store was put back" in refused.stderr
    assert _counts(cli) == changed
    assert sorted(p.name for p in (workdir / ".neoweave").iterdir() if p.name.startswith((".restore", ".replaced"))) \
        == []


def test_neo4j_backups_point_to_neo4j_tools(cli, workdir):
    out = cli("--store", "neo4j", "backup", "nb", check=False)
    assert out.returncode == 1 and "nothing was done" in out.stderr
    assert "neo4j-admin database dump neo4j --to-path=/backups" in out.stdout
    assert f"docker compose -f docker/compose.yml --env-file docker/.env run --rm --no-deps -v {workdir / 'nb'}:" \
           "/backups neo4j" in out.stdout
    out = cli("--store", "neo4j", "restore", "nb", check=False)
    assert out.returncode == 1 and "neo4j-admin database load neo4j --from-path=/backups" in out.stdout
    assert not (workdir / "nb").exists() and not (workdir / ".neoweave").exists()


def test_snapshots_match_their_manifests_under_concurrent_writes(workdir):
    """Writers create and delete without pause during backups; the restored counts, checked against the manifest by
    restore itself, prove each manifest describes its snapshot's moment exactly, and the server never stops."""
    import neoweave

    kb = neoweave.open(workdir / "data")
    kb.store.apply_schema("all-MiniLM-L6-v2", 384)  # starts the server
    socket, pid = kb.store.server.socket_path, kb.store.server_pid()
    stop = threading.Event()
    written: list[float] = []
    errors: list[Exception] = []

    def write() -> None:
        graph = FalkorDB(unix_socket_path=socket).select_graph("busy")
        try:
            while not stop.is_set():
                graph.query("UNWIND range(1, 20) AS i CREATE (:W {i: i})-[:NEXT]->(:V {i: i})")
                if len(written) % 10 == 0:
                    graph.query("MATCH (w:W)-[:NEXT]->(v:V) WITH w, v LIMIT 15 DETACH DELETE w, v")
                written.append(time.monotonic())
        except Exception as exc:  # the test fails on it below
            errors.append(exc)

    writers = [threading.Thread(target=write) for _ in range(2)]
    for thread in writers:
        thread.start()
    manifests, during = [], 0
    try:
        while len(written) < 20:
            time.sleep(0.01)
        for number in range(3):
            started = time.monotonic()
            manifests.append(kb.backup(workdir / f"bk{number}"))
            finished = time.monotonic()
            while sum(stamp > finished for stamp in written) < 5 and not errors:
                time.sleep(0.01)
            during += sum(started < stamp < finished for stamp in written)
    finally:
        stop.set()
        for thread in writers:
            thread.join()
    kb.close()
    assert errors == [] and kb.store.server_pid() == pid
    assert during > 0  # writes went on during the backups
    total = FalkorDB(unix_socket_path=socket).select_graph("busy").ro_query("MATCH (w:W) RETURN count(w)")
    for number, manifest in enumerate(manifests):
        busy = manifest["graphs"]["busy"]
        assert busy["nodes"]["W"] == busy["nodes"]["V"] == busy["relationships"]["NEXT"]
        assert 0 < busy["nodes"]["W"] < total.result_set[0][0]
        with neoweave.open(workdir / f"restored{number}") as restored:
            restored.restore(workdir / f"bk{number}")  # raises if the restored graphs differ from the manifest
            assert restored.store.counts().nodes == manifest["graphs"]["neoweave"]["nodes"] == {"Meta": 1}
        assert not os.path.exists(workdir / f"restored{number}" / "dump.rdb")
