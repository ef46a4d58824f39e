"""`neoweave serve`'s HTTP API, run as a real uvicorn server on the real store and embedder."""

from __future__ import annotations

import json
import re
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from conftest import running_server
from test_query import EVENT_LOOP_Q

from neoweave.config import load_settings
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.kb import KnowledgeBase, Limits
from neoweave.server.app import create_app

QUESTIONS = [EVENT_LOOP_Q, "How do I cancel a task?", "What does the garbage collector do?",
             "How is memory freed?", "What is a coroutine?", "How are callbacks scheduled?",
             "What are tasks in asyncio?", "How do I run something later?"]


@pytest.fixture
def server(falkordb_store, embedder, site, tmp_path):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    settings = load_settings(overrides={"falkordb": {"data_dir": tmp_path / "data"}}, environ={})
    kb = KnowledgeBase(settings, store=falkordb_store, embedder=embedder, read_only=True,
                       limits=Limits(max_question_chars=300, max_k=20))
    app = create_app(kb, max_body_bytes=4096)
    with running_server(app) as url, httpx.Client(base_url=url, timeout=120) as client:
        yield client


def test_status_strategies_and_the_page(server):
    status = server.get("/status").json()
    assert status["store"]["backend"] == "falkordb" and status["nodes"]["Chunk"] == 6
    names = {s["name"]: s for s in server.get("/strategies").json()}
    defaults = {p["name"]: p["default"] for p in names["larag"]["parameters"]}
    assert {"naive", "larag", "kg", "khl", "orion"} <= set(names) and defaults["n_links"] == 1
    assert names["ppr"]["requires"] == ["kg"] and all(p["doc"] for p in names["ppr"]["parameters"])
    page = server.get("/")
    assert page.status_code == 200 and 'data-testid="ask-form"' in page.text
    assert 'maxlength="300"' in page.text and 'max="20"' in page.text  # the knowledge base's limits, not copies
    paths = set(server.get("/openapi.json").json()["paths"])
    assert paths == {"/status", "/strategies", "/query", "/answer", "/answer/stream", "/explain", "/view",
                     "/guide"}  # none writes
    guide = server.get("/guide")
    assert guide.headers["access-control-allow-origin"] == "*" and "document outline" in guide.text


def test_query_explain_and_view(server):
    found = server.post("/query", json={"question": EVENT_LOOP_Q, "strategy": "larag", "k": 1}).json()
    assert [item["origin"] for item in found["items"]] == ["seed", "link"]
    assert found["parameters"]["k"] == 1 and found["trace"]["statements"][0] == "chunk_vector_search"
    tuned = server.post("/query", json={"question": EVENT_LOOP_Q, "strategy": "larag", "k": 1,
                                        "parameters": {"n_links": 0}}).json()
    assert [item["origin"] for item in tuned["items"]] == ["seed"]
    explanation = server.post("/explain", json={"question": EVENT_LOOP_Q, "strategy": "larag", "k": 1}).json()
    assert any(rel["type"] == "LINKS_TO" and rel["stored"] for rel in explanation["relationships"])
    assert {node["role"] for node in explanation["nodes"]} >= {"seed", "link", "section", "document"}
    view = server.get("/view", params={"question": EVENT_LOOP_Q, "strategy": "larag", "k": 1})
    assert view.status_code == 200 and "neo4j-viz-data" in view.text and "LINKS_TO" in view.text
    assets = re.findall(r'(?:src|href)="(/assets/neoweave-viz-[^"]+)"', view.text)
    assert len(view.text) < 100_000 and sorted(a.rsplit(".", 1)[1] for a in assets) == ["css", "js"]
    for asset in assets:  # the renderer the page loads, served once and cached
        served = server.get(asset)
        assert served.status_code == 200 and len(served.content) > 1_000_000 and "max-age" in served.headers[
            "cache-control"]
    assert server.get("/assets/nothing.js").status_code == 404


@pytest.mark.parametrize("body,status,message", [
    ({"question": "x", "k": 21}, 400, "k must be between 1 and 20"),
    ({"question": "x", "k": 0}, 400, "k must be between 1 and 20"),
    ({"question": "x" * 301}, 400, "at most 300 are accepted"),
    ({"question": " \x00 "}, 400, "the question is empty"),
    ({"question": "x", "strategy": "nope"}, 400, "unknown strategy 'nope'"),
    ({"question": "x", "parameters": {"kk": 1}}, 400, "no parameter"),
    ({"question": "x", "strategy": "larag", "parameters": {"depth": 100000}}, 400, "at most 1000"),
    ({"question": "x", "strategy": "larag", "parameters": {"depth": "deep"}}, 400, "depth"),
    ({"question": "x", "parameters": {"k": [1, 2]}}, 400, "must be a number, text or true/false"),
    ({"strategy": "naive"}, 400, "question: Field required"),
    ({"question": "x", "k": "many"}, 400, "k: Input should be a valid integer"),
    ({"question": "x", "k": "5"}, 400, "k: Input should be a valid integer"),  # strict, as the MCP tools are
    ({"question": 5}, 400, "question: Input should be a valid string"),
])
def test_bad_requests_get_a_clear_error(server, body, status, message):
    response = server.post("/query", json=body)
    assert response.status_code == status, response.text
    assert message in response.text


def test_malformed_json_is_a_400_naming_where(server):
    broken = server.post("/query", content=b'{"question": "x",', headers={"content-type": "application/json"})
    assert broken.status_code == 400 and "JSON decode error" in broken.json()["error"]


def test_request_body_limits(server):
    big = server.post("/query", content=json.dumps({"question": "x", "pad": "y" * 5000}),
                      headers={"content-type": "application/json"})
    assert big.status_code == 413 and "above the limit of 4096" in big.json()["error"]

    def chunked():
        yield b'{"question": "x"}'

    streamed = server.post("/query", content=chunked(), headers={"content-type": "application/json"})
    assert streamed.status_code == 411
    unicode = server.post("/query", json={"question": "événement λ 事件 🚀 loop", "k": 2})
    assert unicode.status_code == 200 and len(unicode.json()["items"]) == 2


def test_eight_concurrent_clients_get_what_one_client_gets(server):
    def ask(question: str) -> list[str]:
        response = server.post("/query", json={"question": question, "strategy": "larag", "k": 2})
        assert response.status_code == 200, response.text
        return [item["chunk_id"] for item in response.json()["items"]]

    alone = [ask(question) for question in QUESTIONS]
    with ThreadPoolExecutor(8) as pool:
        together = list(pool.map(ask, QUESTIONS * 3))
    assert together == alone * 3


def test_a_token_guards_every_request_and_the_page_takes_it_once(falkordb_store, embedder, site, tmp_path, cli):
    """`serve --token` (NEOWEAVE_TOKEN): 401 without it, the Bearer header or the page's cookie let through;
    binding beyond localhost without a token is refused unless --insecure."""
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    settings = load_settings(overrides={"falkordb": {"data_dir": tmp_path / "data"}}, environ={})
    kb = KnowledgeBase(settings, store=falkordb_store, embedder=embedder, read_only=True)
    token = "a-shared-secret-for-the-team"
    with running_server(create_app(kb, token=token)) as url, httpx.Client(base_url=url, timeout=120) as client:
        for path in ("/status", "/", "/strategies", "/view?question=x", "/assets/x.js", "/docs"):
            refused = client.get(path)
            assert refused.status_code == 401 and refused.json()["error"] == "a token is required", path
        assert client.post("/query", json={"question": EVENT_LOOP_Q}).status_code == 401
        assert client.get("/status", headers={"Authorization": "Bearer " + token[:-1]}).status_code == 401
        assert client.get("/status", headers={"Authorization": f"Bearer {token}"}).json()["nodes"]["Chunk"] == 6
        entry = client.get(f"/?token={token}", follow_redirects=False)  # the web page, opened once with it
        assert entry.status_code == 303 and entry.headers["location"] == "/" and "HttpOnly" in entry.headers[
            "set-cookie"]
        assert client.get("/").status_code == 200  # the cookie now goes with every request of the page
        found = client.post("/query", json={"question": EVENT_LOOP_Q, "strategy": "naive", "k": 1})
        assert found.status_code == 200 and found.json()["items"]
    for options, message in ((["--host", "0.0.0.0"], "refusing without a token"),
                             (["--host", "0.0.0.0", "--token", "short"], "at least 16 characters")):
        refused = cli("serve", *options, check=False)
        assert refused.returncode == 1 and message in " ".join(refused.stderr.split()), refused.stderr
