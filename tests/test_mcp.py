"""`neoweave mcp`: the MCP server as a real subprocess over a small ingested and enriched graph, driven by the MCP
SDK's own client over stdio and over streamable HTTP (no mocks). Retrieval through it returns what the knowledge
base returns in-process; hostile calls are tool errors naming the argument and leave the graph as it was."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from conftest import COMMUNITY_CORPUS, free_port, lines_until
from mcp import Client, ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

from neoweave.cli.serve import public_host_warning
from neoweave.config import Settings, load_settings
from neoweave.kb import KnowledgeBase
from neoweave.query.prompts import PROMPTS
from neoweave.store.falkordb_server import EmbeddedFalkorDB

BASE = "https://docs.example.org/tiny/"
QUESTION = "Who founded the Python Software Foundation?"
LINK_QUESTION = "How does the event loop schedule coroutines and callbacks?"
TOOLS = {"list_strategies", "retrieve", "answer", "explain", "cypher", "entity", "community", "document", "status"}
MAX_ROWS = 3
HOSTILE: list[tuple[str, dict[str, Any], str]] = [
    # (tool, arguments, what the error must say): each names the argument it is about
    ("retrieve", {"question": QUESTION, "strategy": "no_such_strategy"}, "strategy: unknown strategy"),
    ("retrieve", {"question": QUESTION, "k": 10**9}, "k must be between 1 and 50, not 1000000000"),
    ("retrieve", {"question": "why? " * 1000}, "question: the question has 4999 characters"),
    ("retrieve", {"question": QUESTION, "parameters": {"no_such_parameter": 1}}, "parameters: strategy 'ppr' has no"),
    ("retrieve", {"question": QUESTION, "parameters": {"hops": 10**6}}, "parameters: parameter 'hops' must be at most"),
    ("explain", {"question": QUESTION, "k": 0}, "k must be between 1 and 50, not 0"),
    ("answer", {"question": QUESTION, "prompt": "no_such_prompt"}, "prompt: unknown prompt"),
    ("cypher", {"query": "MATCH (c:Chunk) SET c.text = 'pwned' RETURN c"}, "query: this query writes to the graph"),
    ("cypher", {"query": "MATCH (n) DETACH DELETE n"}, "query: this query writes to the graph"),
    ("cypher", {"query": "MATCH (c:Chunk) /* read */ WITH c LIMIT 1 MERGE (:Tag {name: 'x'})"}, "query: this query"),
    ("cypher", {"query": "CALL db.idx.fulltext.drop('Chunk')"}, "query: this query writes to the graph"),
    ("cypher", {"query": "MATCH (n) RETURN n", "parameters": {"x=1 CREATE (m) //": 1}}, "parameters: 'x=1 CREATE"),
    ("cypher", {"query": "MATCH (n RETURN n"}, "query: FalkorDB rejected the query"),
    ("entity", {"name": "Guido van Rossum", "limit": 10**6}, "limit: parameter 'limit' must be at most 1000"),
    ("entity", {"name": "nobody we know"}, "name: no entity named 'nobody we know'"),
    ("community", {"id": "community:9:nope"}, "id: no community 'community:9:nope'"),
    ("document", {"id": "https://nowhere.example/"}, "id: no document"),
    # a value of another JSON type than the schema declares is refused naming the argument, never converted
    *[(tool, arguments, f"{name}\n  Input should be a valid {kind}") for tool, arguments, name, kind in [
        ("retrieve", {"question": QUESTION, "k": "5"}, "k", "integer"),
        ("retrieve", {"question": QUESTION, "k": True}, "k", "integer"),
        ("retrieve", {"question": QUESTION, "k": 2.0}, "k", "integer"),
        ("retrieve", {"question": 42}, "question", "string"),
        ("retrieve", {"question": QUESTION, "strategy": 1}, "strategy", "string"),
        ("retrieve", {"question": QUESTION, "parameters": "hops=2"}, "parameters", "dictionary"),
        ("answer", {"question": QUESTION, "k": "5"}, "k", "integer"),
        ("answer", {"question": QUESTION, "prompt": ["basic"]}, "prompt", "string"),
        ("explain", {"question": QUESTION, "k": "2"}, "k", "integer"),
        ("explain", {"question": QUESTION, "parameters": [1]}, "parameters", "dictionary"),
        ("cypher", {"query": 1}, "query", "string"),
        ("cypher", {"query": "MATCH (n) RETURN n", "parameters": ["x"]}, "parameters", "dictionary"),
        ("entity", {"name": "Guido van Rossum", "limit": "2"}, "limit", "integer"),
        ("entity", {"name": 7}, "name", "string"),
        ("community", {"id": "community:0:0", "limit": 2.5}, "limit", "integer"),
        ("community", {"id": 3}, "id", "string"),
        ("document", {"id": 7}, "id", "string"),
    ]],
]


@dataclass
class Graph:
    root: Path
    data: Path
    settings: Settings
    env: dict[str, str]


@pytest.fixture(scope="module")
def graph(tmp_path_factory, embedder) -> Graph:
    """The tiny site (hyperlinks) and the two-topic corpus (entities, communities) in a data directory of their own,
    enriched with the fast methods; its embedded server is stopped afterwards. The server's environment has no
    NEOWEAVE_* variables, and an empty local-model directory: answers are refused, never started."""
    root = tmp_path_factory.mktemp("mcp")
    data = root / "data"
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": data}})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.ingest(Path(__file__).parent / "data" / "site", base_url=BASE)
        kb.ingest(COMMUNITY_CORPUS, source_name="corpus")
        kb.enrich("kg", n_process=1)
        kb.enrich("communities", max_cluster_size=6)
    (root / "models").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEOWEAVE_")}
    env.update(NEOWEAVE_LLM_MODEL_DIR=str(root / "models"), PYTHONUNBUFFERED="1")
    yield Graph(root, data, settings, env)
    EmbeddedFalkorDB(data).stop()


@pytest.fixture(scope="module")
def local(graph, embedder) -> KnowledgeBase:
    """The same graph in-process, read-only: what the MCP server's answers are compared with."""
    with KnowledgeBase(graph.settings, embedder=embedder, read_only=True) as kb:
        yield kb


def _command(graph: Graph, *args: str) -> list[str]:
    return [sys.executable, "-m", "neoweave.cli", "--data-dir", str(graph.data), "mcp", "--max-rows", str(MAX_ROWS),
            *args]


def _data(result) -> Any:
    """A tool result's JSON (its structured content, else its text), after checking it is not an error."""
    assert not result.is_error, result.content[0].text
    return result.structured_content if result.structured_content is not None else json.loads(result.content[0].text)


def _error(result) -> str:
    assert result.is_error, result.content
    return result.content[0].text


def _footprint(kb: KnowledgeBase) -> tuple[Any, ...]:
    """What a write would change: counts per label and type, the indexes, one chunk's text."""
    status = kb.status()
    text = kb.cypher("MATCH (c:Chunk) RETURN c.id AS id, c.text AS text ORDER BY id LIMIT 1")
    return status["nodes"], status["relationships"], len(kb.store.indexes()), text


def _chunk_ids(data: dict[str, Any]) -> list[str]:
    return [item["chunk_id"] for item in data["items"]]


# -- over stdio ------------------------------------------------------------------------------------------------------
def test_every_tool_resource_and_prompt_over_stdio(graph, local):
    before = _footprint(local)
    expected_ppr = [item.chunk_id for item in local.retrieve(QUESTION, "ppr", 3).items]
    expected_larag = [item.chunk_id for item in local.retrieve(LINK_QUESTION, "larag", 1, parameters={"n_links": 2}
                                                               ).items]
    community_id = local.cypher("MATCH (c:Community {level: 0}) RETURN c.id AS id ORDER BY c.size DESC LIMIT 1"
                                )[0]["id"]
    stray: list[Exception] = []  # anything on stdout that is not a protocol message

    async def handle(message) -> None:
        if isinstance(message, Exception):
            stray.append(message)

    async def session() -> None:
        params = StdioServerParameters(command=sys.executable, args=_command(graph)[1:], env=graph.env,
                                       cwd=str(graph.root))
        with (graph.root / "stdio-stderr.log").open("w") as errlog:
            async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(
                    read, write, message_handler=handle) as client:
                await client.initialize()
                await _exercise(client, expected_ppr, expected_larag, community_id)

    anyio.run(session)
    log = (graph.root / "stdio-stderr.log").read_text()
    assert "neoweave mcp on stdio, ready after" in log and "loading the embedding model" in log
    assert not stray, stray
    assert _footprint(local) == before


async def _exercise(client: ClientSession, expected_ppr: list[str], expected_larag: list[str], community_id: str
                    ) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == TOOLS and all(tool.annotations.read_only_hint for tool in tools.values())
    schema = tools["retrieve"].input_schema["properties"]
    assert "ppr" in schema["strategy"]["enum"] and schema["k"]["maximum"] == 50 and schema["k"]["default"] == 5
    assert "- larag (ingest only): LARAG" in tools["retrieve"].description  # generated from the registry

    strategies = {s["name"]: s for s in _data(await client.call_tool("list_strategies", {}))["strategies"]}
    assert strategies["ppr"]["ready"] and strategies["ppr"]["steps_run"] == {"kg": True}
    assert not strategies["khl"]["ready"] and "run `neoweave enrich rst` first" in strategies["khl"]["why_not"]
    assert any(p["name"] == "hops" and p["doc"] for p in strategies["ppr"]["parameters"])

    status = _data(await client.call_tool("status", {}))
    assert status["read_only"] and status["nodes"]["Document"] == 8 and set(status["enrich"]) == {"kg", "communities"}
    assert status["limits"]["max_rows"] == MAX_ROWS and status["llm"]["ready"] is False

    found = _data(await client.call_tool("retrieve", {"question": QUESTION, "k": 3}))
    assert found["strategy"] == "ppr" and _chunk_ids(found) == expected_ppr
    assert {"chunk_id", "section_id", "doc_id", "score", "origin", "text"} <= set(found["items"][0])
    assert found["trace"]["statements"][0]["name"] and found["trace"]["nodes_visited"] > 0
    linked = _data(await client.call_tool("retrieve", {"question": LINK_QUESTION, "strategy": "larag", "k": 1,
                                                       "parameters": {"n_links": 2}}))
    assert _chunk_ids(linked) == expected_larag and "link" in [item["origin"] for item in linked["items"]]

    explained = _data(await client.call_tool("explain", {"question": QUESTION, "k": 2}))
    assert explained["browser_cypher"].startswith(":params {")
    roles = {node["role"] for node in explained["explanation"]["nodes"]}
    assert {"entity", "document"} <= roles and explained["explanation"]["strategy"] == "ppr"

    refused = _error(await client.call_tool("answer", {"question": QUESTION}))
    assert "answer needs an LLM" in refused and "neoweave" in refused  # what to run, not a build started

    guido = _data(await client.call_tool("entity", {"name": "guido van rossum", "limit": 2}))["entities"][0]
    assert guido["id"] == "person:guido van rossum" and len(guido["mentioned_in"]) == 2
    assert {m["doc_id"] for m in guido["mentioned_in"]} == {"p1", "p2"} and len(guido["relations"]) == 2

    community = _data(await client.call_tool("community", {"id": community_id, "limit": 3}))
    assert community["level"] == 0 and community["report"].startswith("# ") and len(community["members"]) == 3
    assert community["members_total"] == community["size"] and community["children"]

    outline = _data(await client.call_tool("document", {"id": BASE + "index.html"}))
    assert outline["title"] == "Tiny Docs" and outline["sections"][0]["links"]
    assert {link["target_doc"] for link in outline["sections"][0]["links"]} == {
        BASE + "guide/async.html", BASE + "guide/memory.html"}

    rows = _data(await client.call_tool("cypher", {"query": "MATCH (c:Chunk) WHERE c.doc_id STARTS WITH $prefix "
                                                            "RETURN c ORDER BY c.id", "parameters": {"prefix": "k"}}))
    assert rows["truncated"] is False and len(rows["rows"]) == 3 and "embedding" not in rows["rows"][0]["c"][
        "properties"]
    capped = _data(await client.call_tool("cypher", {"query": "MATCH (c:Chunk) RETURN c.id AS id"}))
    assert capped["truncated"] is True and capped["row_count"] == MAX_ROWS == len(capped["rows"])

    for tool, arguments, expected in HOSTILE:
        assert expected in _error(await client.call_tool(tool, arguments)), (tool, arguments)

    uris = {str(resource.uri) for resource in (await client.list_resources()).resources}
    assert uris == {"neoweave://schema", "neoweave://queries"}
    schema_doc = json.loads((await client.read_resource("neoweave://schema")).contents[0].text)
    assert {"Document", "Section", "Chunk", "Entity"} <= {label["name"] for label in schema_doc["labels"]}
    assert schema_doc["stored_indexes"]
    saved = json.loads((await client.read_resource("neoweave://queries")).contents[0].text)
    assert "document_outline" in {query["name"] for query in saved}
    text = (await client.read_resource("neoweave://queries/document_outline")).contents[0].text
    assert "// @param doc_id: STRING" in text and "MATCH (d:Document {id: $doc_id})" in text

    prompts = {prompt.name: prompt for prompt in (await client.list_prompts()).prompts}
    assert set(prompts) == set(PROMPTS)
    assert [a.name for a in prompts["short_answer"].arguments] == ["question", "strategy", "k"]
    filled = await client.get_prompt("short_answer", {"question": QUESTION, "strategy": "naive", "k": "1"})
    message = filled.messages[0].content.text
    assert PROMPTS["short_answer"].system in message and "Guido van Rossum founded the Python Software" in message


# -- over streamable HTTP --------------------------------------------------------------------------------------------
def test_streamable_http_answers_like_stdio_and_guards_its_door(graph, local):
    before = _footprint(local)
    expected = [item.chunk_id for item in local.retrieve(QUESTION, "naive", 2).items]
    port = free_port()
    token = "t0ken-for-the-test-only"
    server = subprocess.Popen(_command(graph, "--http", "--port", str(port), "--max-body-bytes", "4096"),
                              cwd=graph.root, env={**graph.env, "NEOWEAVE_TOKEN": token}, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        lines = lines_until(server.stderr, "serving", 180)  # type: ignore[arg-type]
        assert any(f"neoweave mcp serving {url}" in line for line in lines), lines

        async def session() -> None:
            transport = streamable_http_client(url, http_client=create_mcp_http_client(
                headers={"Authorization": f"Bearer {token}"}))
            async with Client(transport) as client:
                assert {tool.name for tool in (await client.list_tools()).tools} == TOOLS
                found = _data(await client.call_tool("retrieve", {"question": QUESTION, "strategy": "naive",
                                                                  "k": 2}))
                assert _chunk_ids(found) == expected
                assert "query: this query writes" in _error(await client.call_tool(
                    "cypher", {"query": "MATCH (c:Chunk) SET c.text = '' RETURN count(c)"}))
                assert "k must be between 1 and 50" in _error(await client.call_tool(
                    "retrieve", {"question": QUESTION, "k": 51}))

        anyio.run(session)
        anonymous = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        refused = httpx.post(url, json=ping, headers=anonymous, timeout=30)  # --token (NEOWEAVE_TOKEN) was given
        assert refused.status_code == 401 and refused.headers["www-authenticate"].startswith("Bearer")
        wrong = httpx.post(url, json=ping, headers={**anonymous, "Authorization": "Bearer x" + token}, timeout=30)
        assert wrong.status_code == 401
        headers = {**anonymous, "Authorization": f"Bearer {token}"}
        rebound = httpx.post(url, json=ping, headers={**headers, "Host": "attacker.example"}, timeout=30)
        assert rebound.status_code == 421  # DNS-rebinding protection on a localhost binding
        padded = {**ping, "params": {"_meta": {"padding": "x" * 8000}}}
        assert httpx.post(url, content=json.dumps(padded), headers=headers, timeout=30).status_code == 413
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(timeout=30)
    rest = server.stderr.read()  # type: ignore[union-attr]
    assert server.returncode in (0, 130) and "Traceback" not in rest, rest  # Ctrl-C: the CLI's "aborted", 130
    assert server.stdout.read() == ""  # type: ignore[union-attr]  # messages go to stderr
    assert _footprint(local) == before


def test_a_public_binding_is_warned_about_and_bad_options_are_refused(graph):
    assert public_host_warning("127.0.0.1") is None and public_host_warning("::1") is None
    assert "anyone who can reach it can query the graph" in public_host_warning("0.0.0.0")
    assert "TLS" in public_host_warning("0.0.0.0", "a-token-of-sixteen+")
    for options, message in ((["--host", "0.0.0.0"], "refusing without a token"),
                             (["--host", "0.0.0.0", "--token", "short"], "--token must be at least 16 characters")):
        bad = subprocess.run(_command(graph, "--http", *options), cwd=graph.root, env=graph.env,
                             capture_output=True, text=True, timeout=120)
        assert bad.returncode == 1 and message in " ".join(bad.stderr.split()), bad.stderr
    bad = subprocess.run(_command(graph, "--http", "--port", "70000"), cwd=graph.root, env=graph.env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "--port must be between 1 and 65535, not 70000" in bad.stderr
    bad = subprocess.run(_command(graph, "--max-k", "0"), cwd=graph.root, env=graph.env, capture_output=True,
                         text=True, timeout=120)
    assert bad.returncode == 1 and "--max-k must be at least 1, not 0" in bad.stderr and not bad.stdout
