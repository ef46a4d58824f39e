"""Agent frameworks on a real graph (the tiny hyperlinked site, entities from `enrich kg`): the LlamaIndex retriever
and the LangChain tools return what the knowledge base retrieves (the same chunks in the same order), say where each
chunk came from, describe their arguments exactly as the MCP server does, refuse a bad argument by name, and reach
nothing beyond this machine."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import socket
import subprocess
import sys
from types import ModuleType
from typing import Any

import pytest

from neoweave.mcp.contract import TOOL_NAMES, Refusal

BASE = "https://docs.example.org/tiny/"
QUESTION = "How does the event loop schedule coroutines and callbacks?"
CASES = [("naive", 3, {}), ("larag", 1, {"n_links": 2}), ("ppr", 3, {})]
"""(strategy, k, parameters): vector search, its hyperlink expansion and the graph walk over entities."""
LOCAL_HOSTS = {"localhost", "127.0.0.1", "::1", None}


def _extra(module: str, extra: str) -> ModuleType:
    """The module, or a skip when its extra is not installed (CI installs every extra: there it must import)."""
    if os.environ.get("CI"):
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"the {extra} extra is not installed")


@pytest.fixture
def llamaindex() -> ModuleType:
    _extra("llama_index.core", "llamaindex")
    return importlib.import_module("neoweave.integrations.llamaindex")


@pytest.fixture
def langchain_tools() -> ModuleType:
    _extra("langchain_core", "langchain")
    return importlib.import_module("neoweave.integrations.langchain_tools")


@pytest.fixture
def graph(kb, site):
    """The test's knowledge base over the site, with its entity layer (ppr walks it)."""
    kb.ingest(site, base_url=BASE)
    kb.enrich("kg", n_process=1)
    return kb


@pytest.fixture
def offline(monkeypatch) -> list[Any]:
    """Refuses (and records) any connection or name lookup beyond this machine: a library that would download a
    tokenizer or call a hosted model fails the test instead of waiting on the network."""
    reached: list[Any] = []
    real_getaddrinfo, real_connect = socket.getaddrinfo, socket.socket.connect

    def getaddrinfo(host, *args, **kwargs):
        if (host.decode() if isinstance(host, bytes) else host) not in LOCAL_HOSTS:
            reached.append(host)
            raise OSError(f"test is offline: lookup of {host}")
        return real_getaddrinfo(host, *args, **kwargs)

    def connect(self, address):
        if isinstance(address, tuple) and address[0] not in LOCAL_HOSTS:
            reached.append(address)
            raise OSError(f"test is offline: connect to {address}")
        return real_connect(self, address)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket.socket, "connect", connect)
    return reached


# -- LlamaIndex ------------------------------------------------------------------------------------------------------
def test_llamaindex_retriever_returns_the_strategy_chunks_in_order_with_where_they_came_from(graph, llamaindex,
                                                                                             offline):
    from llama_index.core.schema import MetadataMode
    from llama_index.core.settings import Settings

    for strategy, k, parameters in CASES:
        expected = graph.retrieve(QUESTION, strategy, k, parameters=parameters).items
        retriever = llamaindex.NeoweaveLlamaIndexRetriever(graph, strategy, k, parameters)
        hits = retriever.retrieve(QUESTION)
        assert [hit.node.node_id for hit in hits] == [item.chunk_id for item in expected] != [], strategy
        assert [hit.score for hit in hits] == pytest.approx([item.score for item in expected]), strategy
        for rank, (hit, item) in enumerate(zip(hits, expected, strict=True), 1):
            metadata = hit.node.metadata
            assert (metadata["kind"], metadata["rank"], metadata["origin"]) == ("chunk", rank, item.origin)
            assert (metadata["section_id"], metadata["doc_id"]) == (item.section_id, item.doc_id)
            assert metadata["section_title"] == item.section_title and metadata["url"] == item.url
            assert hit.node.ref_doc_id == item.doc_id and hit.node.text == item.text
            assert metadata["neoweave"]["strategy"] == strategy and metadata["neoweave"]["trace"]["statements"]
        shown = hits[0].node.get_content(metadata_mode=MetadataMode.LLM)
        assert expected[0].section_title in shown and "neoweave" not in shown and "chunk_id" not in shown
        if strategy == "larag":
            linked = [hit.node.metadata for hit in hits if hit.node.metadata["origin"] == "link"]
            assert linked and all(metadata["hop"] >= 1 for metadata in linked)
        if strategy == "ppr":
            assert hits[0].node.metadata["neoweave"]["trace"]["seeds"]  # where the walk started
    again = asyncio.run(llamaindex.NeoweaveLlamaIndexRetriever(graph, "naive", 2).aretrieve(QUESTION))
    assert [hit.node.node_id for hit in again] == [item.chunk_id for item in graph.retrieve(QUESTION, "naive", 2).items]
    assert offline == []
    assert Settings._llm is None and Settings._embed_model is None  # LlamaIndex's OpenAI defaults never resolved


def test_llamaindex_retriever_refuses_a_bad_argument_by_name(kb, llamaindex):
    make = llamaindex.NeoweaveLlamaIndexRetriever
    with pytest.raises(Refusal, match=r"^strategy: unknown strategy 'nope'"):
        make(kb, "nope")
    with pytest.raises(Refusal, match=r"^k must be between 1 and 50, not 1000000000"):
        make(kb, "naive", 10**9)
    with pytest.raises(Refusal, match=r"^parameters: strategy 'larag' has no parameter 'bogus'"):
        make(kb, "larag", 2, {"bogus": 1})
    with pytest.raises(Refusal, match=r"^parameters: parameter 'n_links' must be at most 1000"):
        make(kb, "larag", 2, {"n_links": 10**6})
    with pytest.raises(Refusal, match=r"^question: the question is empty"):
        make(kb, "naive", 2).retrieve("   ")


def test_importing_the_integrations_downloads_and_configures_nothing():
    """In a fresh interpreter: no environment variable set, no tokenizer library loaded, LlamaIndex's global
    settings (OpenAI defaults) untouched."""
    _extra("llama_index.core", "llamaindex")
    _extra("langchain_core", "langchain")
    code = ("import os, sys; before = dict(os.environ)\n"
            "import neoweave.integrations.llamaindex, neoweave.integrations.langchain_tools\n"
            "from llama_index.core.settings import Settings\n"
            "print(dict(os.environ) == before, sorted(m for m in ('nltk', 'tiktoken') if m in sys.modules),"
            " Settings._llm, Settings._embed_model)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert result.stdout.split() == ["True", "[]", "None", "None"], result.stderr


# -- LangChain tools -------------------------------------------------------------------------------------------------
def test_langchain_tools_return_the_strategy_chunks_and_the_mcp_data(graph, langchain_tools, offline):
    tools = {tool.name: tool for tool in langchain_tools.neoweave_tools(graph)}
    assert list(tools) == list(TOOL_NAMES)
    for strategy, k, parameters in CASES:
        expected = [item.chunk_id for item in graph.retrieve(QUESTION, strategy, k, parameters=parameters).items]
        found = tools["retrieve"].invoke({"question": QUESTION, "strategy": strategy, "k": k,
                                          "parameters": parameters})
        assert [item["chunk_id"] for item in found["items"]] == expected != [], strategy
        assert found["strategy"] == strategy and found["trace"]["statements"]
    # as an agent calls it: a tool call in, a ToolMessage with the JSON out; omitted arguments take their defaults
    message = tools["retrieve"].invoke({"type": "tool_call", "id": "call-1", "name": "retrieve",
                                        "args": {"question": QUESTION}})
    called = json.loads(message.content)
    assert called["strategy"] == "ppr" and called["parameters"]["k"] == 5
    assert [item["chunk_id"] for item in called["items"]] == [
        item.chunk_id for item in graph.retrieve(QUESTION, "ppr", 5).items]

    explained = tools["explain"].invoke({"question": QUESTION, "strategy": "larag", "k": 1})
    assert explained["browser_cypher"].startswith(":params {") and explained["explanation"]["strategy"] == "larag"
    outline = tools["document"].invoke({"id": BASE + "index.html"})
    assert outline["title"] == "Tiny Docs" and outline["sections"][0]["links"]
    entity_id = graph.cypher("MATCH (e:Entity)<-[:MENTIONS]-(:Chunk) RETURN e.id AS id ORDER BY id LIMIT 1")[0]["id"]
    entity = tools["entity"].invoke({"name": entity_id, "limit": 2})["entities"][0]
    assert entity["id"] == entity_id and 1 <= len(entity["mentioned_in"]) <= 2
    strategies = {entry["name"]: entry for entry in tools["list_strategies"].invoke({})["strategies"]}
    assert strategies["ppr"]["steps_run"] == {"kg": True}
    status = tools["status"].invoke({})
    assert status["nodes"]["Document"] >= 3 and "kg" in status["enrich"]
    rows = tools["cypher"].invoke({"query": "MATCH (d:Document) RETURN d.id AS id ORDER BY id LIMIT 1"})
    assert rows["row_count"] == 1 and rows["truncated"] is False
    assert offline == []


def test_langchain_tools_refuse_a_bad_argument_by_name(kb, langchain_tools):
    from langchain_core.tools import ToolException

    from neoweave.errors import NeoweaveError

    tools = {tool.name: tool for tool in langchain_tools.neoweave_tools(kb, prefix="neoweave_")}
    retrieve = tools["neoweave_retrieve"]
    with pytest.raises(ToolException, match=r"^strategy: unknown strategy 'nope'"):
        retrieve.invoke({"question": QUESTION, "strategy": "nope"})
    with pytest.raises(ToolException, match=r"^k must be between 1 and 50, not 1000000000"):
        retrieve.invoke({"question": QUESTION, "k": 10**9})
    with pytest.raises(ToolException, match=r"^parameters: strategy 'ppr' has no parameter 'bogus'"):
        retrieve.invoke({"question": QUESTION, "parameters": {"bogus": 1}})
    with pytest.raises(ToolException, match=r"^limit: parameter 'limit' must be at most 1000"):
        tools["neoweave_entity"].invoke({"name": "anyone", "limit": 10**6})
    with pytest.raises(ToolException, match=r"^query: this query writes to the graph"):
        tools["neoweave_cypher"].invoke({"query": "MATCH (n) DETACH DELETE n"})  # refused on a writable kb too
    retrieve.handle_tool_error = True  # what an agent does to show the model its mistake
    assert retrieve.invoke({"question": QUESTION, "k": 0}).startswith("k must be between 1 and 50, not 0")
    with pytest.raises(NeoweaveError, match=r"^names: no tool 'bogus'"):
        langchain_tools.neoweave_tools(kb, names=["retrieve", "bogus"])


def test_langchain_tools_describe_their_arguments_as_the_mcp_server_does(kb, langchain_tools):
    _extra("mcp", "mcp")
    import anyio

    from neoweave.mcp.server import create_server

    served = {tool.name: tool for tool in anyio.run(create_server(kb).list_tools)}
    tools = langchain_tools.neoweave_tools(kb)
    assert {tool.name for tool in tools} == set(served)
    for tool in tools:
        assert tool.description == served[tool.name].description, tool.name
        assert _untitled(tool.args_schema.model_json_schema()) == _untitled(served[tool.name].input_schema), tool.name


def _untitled(schema: Any) -> Any:
    """A JSON schema without its titles (the SDK and pydantic's create_model title the models differently)."""
    if isinstance(schema, dict):
        return {key: _untitled(value) for key, value in schema.items() if key != "title"}
    if isinstance(schema, list):
        return [_untitled(value) for value in schema]
    return schema
