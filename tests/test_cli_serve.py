"""`neoweave query` and `explain` use a running `neoweave serve` for the same graph (the models stay loaded),
print what the in-process path prints, and fall back to it when the server is gone (real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest
from conftest import free_port, lines_until

QUESTION = "How does the event loop schedule coroutines and callbacks?"
BASE = "https://docs.example.org/tiny/"


@pytest.fixture
def neoweave(cli):
    return cli  # the shared `neoweave ...` runner (conftest)



def test_query_and_explain_go_through_a_running_server(neoweave, workdir, site):
    neoweave("ingest", str(site), "--no-progress", "--base-url", BASE)
    local = json.loads(neoweave("query", QUESTION, "-s", "larag", "--k", "1", "--json", "--no-server").stdout)
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "neoweave.cli", "serve", "--port", str(port)], cwd=workdir,
                              env={**neoweave.env, "PYTHONUNBUFFERED": "1"}, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    try:
        output = lines_until(server.stdout, "serving", 120)  # type: ignore[arg-type]
        assert any("loading the embedding model" in line for line in output), output
        record = json.loads((workdir / ".neoweave" / "serve.json").read_text())
        assert record["url"] == f"http://127.0.0.1:{port}" and record["pid"] == server.pid
        remote = json.loads(neoweave("query", QUESTION, "-s", "larag", "--k", "1", "--json").stdout)
        assert [i["chunk_id"] for i in remote["items"]] == [i["chunk_id"] for i in local["items"]]
        assert remote["parameters"] == local["parameters"] and remote["trace"]["statements"]
        table = neoweave("query", QUESTION, "-s", "larag", "--k", "1").stdout
        assert "link (hop 1)" in table and "statements: chunk_vector_search" in table
        refused = neoweave("query", QUESTION, "--k", "500", check=False)  # the server's limits, its message
        assert refused.returncode == 1 and "k must be between 1 and 50, not 500" in refused.stderr
        view = workdir / "why.html"
        explained = neoweave("explain", QUESTION, "-s", "larag", "--k", "1", "--html", str(view)).stdout
        assert "graph view" in explained and "neo4j-viz" in view.read_text(encoding="utf-8")
        assert "POST /query 200" in "".join(_drain(server))  # they were answered by the server
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    assert not (workdir / ".neoweave" / "serve.json").exists()  # withdrawn at exit
    after = json.loads(neoweave("query", QUESTION, "-s", "larag", "--k", "1", "--json").stdout)
    assert [i["chunk_id"] for i in after["items"]] == [i["chunk_id"] for i in local["items"]]


@pytest.mark.parametrize("pid", [2**22 + 1, os.getpid()], ids=["gone", "reused"])
def test_a_stale_serve_file_is_ignored_and_removed(neoweave, workdir, site, pid):
    """Left by a server that died (SIGKILL), its pid gone or since taken by another process (this one, which
    started long after the recorded time)."""
    neoweave("ingest", str(site), "--no-progress", "--base-url", BASE)
    announced = workdir / ".neoweave" / "serve.json"
    announced.write_text(json.dumps({
        "url": "http://127.0.0.1:9", "pid": pid, "started": 1.0, "backend": "falkordb", "graph": "neoweave",
        "database": None, "embedding_model": "all-MiniLM-L6-v2"}))
    found = json.loads(neoweave("query", QUESTION, "--k", "1", "--json").stdout)
    assert len(found["items"]) == 1 and not announced.exists()


def _drain(server: subprocess.Popen) -> list[str]:
    """What the server logged so far (it logs each request at INFO)."""
    os.set_blocking(server.stdout.fileno(), False)  # type: ignore[union-attr]
    time.sleep(0.5)
    lines = []
    while True:
        line = server.stdout.readline()  # type: ignore[union-attr]
        if not line:
            return lines
        lines.append(line)
