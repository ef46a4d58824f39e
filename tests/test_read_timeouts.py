"""Every read served to a person or client is bounded in time (`store.read_timeout`), on a real store.

The probe: `MATCH (a),(b),(c) RETURN count(*)` on a graph of ~1,250 nodes ran for 258 s through the MCP `cypher` tool
(rows were capped, time was not). Here it is stopped at a 1 s limit by the knowledge base's `cypher` verb, by
`neoweave cypher`, and by the MCP tool; the store stops it itself (its process goes idle) and answers the next query
at once. A retrieval past its limit ends with the same error, a 504 over HTTP. Writes are not bounded.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from conftest import NEO4J_SKIP_REASON, NEO4J_URI, ScriptedClient, running_server
from mcp import ClientSession, StdioServerParameters, stdio_client

from neoweave.config import Settings, load_settings
from neoweave.errors import ConfigError, ReadTimeout
from neoweave.kb import KnowledgeBase
from neoweave.store.falkordb_server import EmbeddedFalkorDB
from neoweave.store.read_limit import bounded_iterator, current, read_limit

PROBE = "MATCH (a),(b),(c) RETURN count(*) AS n"
"""The probe's query: every triple of nodes (about 2e9 on this graph: minutes without a limit)."""
LIMIT_ERROR = "the query ran longer than the 1 s read limit (store.read_timeout / --timeout)"
STOPPED_WITHIN = 8.0
"""Seconds a 1 s-limited probe may take here, start-up and a loaded machine included: far below its unlimited time."""
RECORDS = 420
"""One-sentence records: a document, a section and a chunk each, so with the site about 1,300 nodes."""
QUESTION = "How does the event loop schedule coroutines and callbacks?"


@dataclass
class Graph:
    root: Path
    data: Path
    env: dict[str, str]

    def settings(self, read_timeout: float) -> Settings:
        return load_settings(environ={}, overrides={"falkordb": {"data_dir": self.data},
                                                    "store": {"read_timeout": read_timeout}})


@pytest.fixture(scope="module")
def graph(tmp_path_factory, embedder) -> Graph:
    """The tiny linked site and `RECORDS` short records in a data directory of their own, ingested by a knowledge
    base whose read limit is a microsecond (writes are not bounded by it); its server is stopped afterwards."""
    root = tmp_path_factory.mktemp("timeouts")
    data = root / "data"
    graph = Graph(root, data, {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")})
    records = [{"id": f"note-{n}", "title": f"Note {n}", "text": f"Note {n} says the event loop ran task {n} in turn."}
               for n in range(RECORDS)]
    with KnowledgeBase(graph.settings(1e-6), embedder=embedder) as kb:
        kb.ingest(Path(__file__).parent / "data" / "site", base_url="https://docs.example.org/tiny/")
        kb.ingest(records, source_name="notes")
    yield graph
    EmbeddedFalkorDB(data).stop()


@pytest.fixture(scope="module")
def limited(graph, embedder) -> KnowledgeBase:
    """The graph read-only with a 1 s read limit."""
    with KnowledgeBase(graph.settings(1.0), embedder=embedder, read_only=True) as kb:
        yield kb


def _server_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _answers_at_once(kb: KnowledgeBase) -> int:
    """After a stopped query the store still serves: a count answers within a second."""
    started = time.perf_counter()
    nodes = kb.cypher("MATCH (n) RETURN count(n) AS n")[0]["n"]
    assert time.perf_counter() - started < 1.0
    return nodes


# -- the knowledge base's verbs ----------------------------------------------------------------------------------------
def test_the_probe_query_is_stopped_at_the_limit_by_the_store(limited):
    nodes = _answers_at_once(limited)
    assert nodes >= 1200
    pid = limited.store.server_pid()
    started = time.perf_counter()
    with pytest.raises(ReadTimeout) as stopped:
        limited.cypher(PROBE)
    elapsed = time.perf_counter() - started
    assert 0.9 < elapsed < STOPPED_WITHIN
    assert stopped.value.message == LIMIT_ERROR
    assert "store.read_timeout in neoweave.toml, NEOWEAVE_READ_TIMEOUT, or --timeout SECONDS" in stopped.value.hint
    assert isinstance(stopped.value.__cause__, ReadTimeout)  # the store's own stop, not the client walking away
    busy = _server_cpu_seconds(pid)
    time.sleep(1.0)
    assert _server_cpu_seconds(pid) - busy < 0.3  # nothing left running in the store
    assert _answers_at_once(limited) == nodes


def test_every_read_is_bounded_but_no_write(graph, embedder):
    with KnowledgeBase(graph.settings(1e-6), embedder=embedder) as kb:
        with pytest.raises(ReadTimeout, match=r"the query ran longer than the 1e-06 s read limit"):
            kb.cypher("MATCH (a),(b) RETURN count(*) AS n")
        kb.cypher("MERGE (t:Tag {name: 'timeouts-probe'}) RETURN t.name AS name", write=True)
        kb.cypher("MATCH (t:Tag {name: 'timeouts-probe'}) DETACH DELETE t", write=True)
    with KnowledgeBase(graph.settings(0), embedder=embedder, read_only=True) as unbounded:
        assert unbounded.cypher("MATCH (a:Document),(b:Document) RETURN count(*) AS n")[0]["n"] > RECORDS ** 2


def test_a_retrieval_past_its_limit_ends_with_the_error(graph, embedder, limited):
    statements = limited.retrieve(QUESTION, "larag", 3).trace.statements
    assert len(statements) >= 2  # so a budget spent by the first statement stops the next one
    with KnowledgeBase(graph.settings(1e-6), embedder=embedder, llm=ScriptedClient(), read_only=True) as kb:
        with pytest.raises(ReadTimeout) as stopped:
            kb.retrieve(QUESTION, "larag", 3)
        assert stopped.value.message == ("the retrieval ran longer than the 1e-06 s read limit "
                                         "(store.read_timeout / --timeout)")
        with pytest.raises(ReadTimeout, match="the explanation ran longer"):
            kb.explain(QUESTION, "larag", 3)
        with pytest.raises(ReadTimeout, match="the retrieval ran longer"):  # before the model is asked anything
            kb.answer(QUESTION, "larag", 3)
        events = kb.answer_stream(QUESTION, "larag", 3)  # a stream runs as it is read: each step under the budget
        with pytest.raises(ReadTimeout, match="the retrieval ran longer"):
            next(events)
        assert _answers_at_once(kb) > 1200  # the next request has a budget of its own


# -- the front ends ----------------------------------------------------------------------------------------------------
def _cli(graph: Graph, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "neoweave.cli", "--data-dir", str(graph.data), *args],
                          cwd=graph.root, env=env or graph.env, capture_output=True, text=True, timeout=120)


def test_neoweave_cypher_stops_at_timeout_and_exits_1(graph):
    started = time.perf_counter()
    stopped = _cli(graph, "cypher", "--timeout", "1", PROBE)
    assert time.perf_counter() - started < STOPPED_WITHIN + 10  # the process's own start included
    assert stopped.returncode == 1, stopped.stderr
    assert stopped.stderr.splitlines()[0] == f"error: {LIMIT_ERROR}"
    by_variable = _cli(graph, "cypher", PROBE, env={**graph.env, "NEOWEAVE_READ_TIMEOUT": "1"})
    assert by_variable.returncode == 1 and LIMIT_ERROR in by_variable.stderr
    counted = _cli(graph, "cypher", "--timeout", "1", "--json", "MATCH (d:Document) RETURN count(d) AS n")
    assert counted.returncode == 0 and json.loads(counted.stdout)["n"] > RECORDS
    refused = _cli(graph, "cypher", "--timeout", "-1", "MATCH (n) RETURN n LIMIT 1")
    assert refused.returncode == 1 and "store.read_timeout" in refused.stderr


def test_the_mcp_cypher_tool_stops_at_timeout(graph):
    async def session() -> tuple[str, int, str]:
        params = StdioServerParameters(command=sys.executable, args=["-m", "neoweave.cli", "--data-dir",
                                                                     str(graph.data), "mcp", "--timeout", "1"],
                                       env=graph.env, cwd=str(graph.root))
        with (graph.root / "mcp-stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as client:
                await client.initialize()
                tools = {tool.name: tool for tool in (await client.list_tools()).tools}
                started = time.perf_counter()
                stopped = await client.call_tool("cypher", {"query": PROBE})
                assert time.perf_counter() - started < STOPPED_WITHIN
                assert stopped.is_error
                counted = await client.call_tool("cypher", {"query": "MATCH (n) RETURN count(n) AS n"})
                assert not counted.is_error, counted.content[0].text
                return stopped.content[0].text, counted.structured_content["rows"][0]["n"], \
                    tools["cypher"].description

    text, nodes, description = anyio.run(session)
    assert f"query: {LIMIT_ERROR} (hint: ask for less" in text
    assert nodes > 1200
    assert "one that runs longer than 1 s is stopped" in description


def test_http_answers_504_naming_the_limit(graph, embedder):
    from neoweave.server.app import create_app

    with KnowledgeBase(graph.settings(1e-6), embedder=embedder, read_only=True) as kb, \
            running_server(create_app(kb)) as url:
        response = httpx.post(f"{url}/query", json={"question": QUESTION, "strategy": "larag", "k": 3}, timeout=60)
        assert response.status_code == 504
        body = response.json()
        assert body["error"] == "the retrieval ran longer than the 1e-06 s read limit (store.read_timeout / --timeout)"
        assert "raise the limit" in body["hint"]
        assert httpx.get(f"{url}/status", timeout=60).status_code == 200  # the store keeps serving


# -- the pieces --------------------------------------------------------------------------------------------------------
def test_the_setting_and_its_variable():
    assert load_settings(environ={}).store.read_timeout == 30.0
    assert load_settings(environ={"NEOWEAVE_READ_TIMEOUT": "2.5"}).store.read_timeout == 2.5
    with pytest.raises(ConfigError, match=r"NEOWEAVE_READ_TIMEOUT: invalid value for 'store\.read_timeout'"):
        load_settings(environ={"NEOWEAVE_READ_TIMEOUT": "-1"})


def test_one_budget_per_request_and_per_streamed_step():
    # an answer inside an explanation: the outer budget goes on
    with read_limit(5, "the explanation") as outer, read_limit(1, "the retrieval") as inner:
        assert inner is outer and current() is outer
    assert current() is None
    with read_limit(0, "the query") as none:  # 0: no limit
        assert none is None and current() is None
    with read_limit(2, "the retrieval") as budget:
        seen = list(bounded_iterator(budget, (current() for _ in range(3))))
    assert seen == [budget] * 3 and current() is None


@pytest.mark.skipif(not NEO4J_URI, reason=NEO4J_SKIP_REASON)
def test_neo4j_stops_the_probe_at_its_transaction_timeout(neo4j_store):
    neo4j_store.query("UNWIND range(1, 1250) AS i CREATE (:TimeoutProbe {i: i})", write=True)
    try:
        started = time.perf_counter()
        with read_limit(1, "the query"), pytest.raises(ReadTimeout, match=re.escape(LIMIT_ERROR)):
            neo4j_store.query("MATCH (a:TimeoutProbe),(b:TimeoutProbe),(c:TimeoutProbe) RETURN count(*) AS n")
        assert time.perf_counter() - started < STOPPED_WITHIN
        assert neo4j_store.query("MATCH (p:TimeoutProbe) RETURN count(p) AS n") == [{"n": 1250}]
    finally:
        neo4j_store.query("MATCH (p:TimeoutProbe) DETACH DELETE p", write=True)
