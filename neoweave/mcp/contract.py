"""The tools' contract without the MCP SDK: each tool's description, its arguments (types, docs, bounds, defaults)
and what a call does, refusing a bad argument by name.

The MCP server (`server.py`) and the LangChain tools (`neoweave.integrations.langchain_tools`) are both built from
it, so an agent reads the same docs, gets the same JSON (`views`) and the same refusals whichever way it calls
neoweave. Descriptions are generated from the strategy and prompt registries and the knowledge base's limits, so
they say what `neoweave strategies` says. Every argument is checked by the knowledge base's own `Limits` and
registries (the checks the command line and the HTTP API make) before anything runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from neoweave.errors import NeoweaveError, ReadOnlyViolation
from neoweave.mcp import views

if TYPE_CHECKING:
    from neoweave.kb import KnowledgeBase

TOOL_NAMES = ("list_strategies", "retrieve", "answer", "explain", "cypher", "entity", "community", "document",
              "status")
CYPHER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_STRATEGY = "ppr"
DEFAULT_K = 5
DEFAULT_PROMPT = "short_answer"
"""A tool call's defaults: the MCP tools' signatures and the LangChain tools' schemas both read these."""
DEFAULT_LIMIT = 10
"""Mentions, relations or members listed by the entity and community tools unless a caller asks for more."""


class Refusal(NeoweaveError):
    """A tool call refused before it ran (or a refusal by the knowledge base while it ran): the message says why,
    starting with the argument at fault when one is. Front ends turn it into their own tool error."""


@contextlib.contextmanager
def argument(name: str | None) -> Iterator[None]:
    """Turn the knowledge base's refusal into a `Refusal` that names the argument it is about."""
    try:
        yield
    except Refusal:
        raise
    except ReadOnlyViolation as exc:
        prefix = f"{name}: " if name else ""
        raise Refusal(f"{prefix}{exc.message} (these tools only read; run writes yourself with "
                      "`neoweave cypher --write`)") from None
    except NeoweaveError as exc:
        text = f"{name}: {exc.message}" if name and not exc.message.startswith(f"{name} ") else exc.message
        raise Refusal(f"{text} (hint: {exc.hint})" if exc.hint else text) from None


@dataclass(frozen=True)
class Arguments:
    """The tools' argument types (`Annotated` with a pydantic `Field`: description, enum, bounds), built from one
    knowledge base's limits and the registries; tool schemas are generated from them. Every one is strict: a
    value of another JSON type than the schema declares (`"5"` for an integer, `5` for a string, `true` for a
    number) is refused naming the argument, not converted, as mcp.md says."""

    question: Any
    strategy: Any
    k: Any
    parameters: Any
    prompt: Any
    limit: Any
    entity_name: Any
    community_id: Any
    document_id: Any
    cypher_query: Any
    cypher_parameters: Any


def arguments(kb: KnowledgeBase) -> Arguments:
    """The argument types for `kb`: its limits in the bounds, its strategies and the answer prompts as enums."""
    from neoweave.query.prompts import PROMPTS

    limits = kb.limits
    strategy_names = [entry["name"] for entry in kb.strategies()]
    prompt_names = sorted(PROMPTS)
    return Arguments(
        question=Annotated[str, _field(f"the question (at most {limits.max_question_chars} characters)")],
        strategy=Annotated[str, _field("a retrieval strategy (see list_strategies)", enum=strategy_names)],
        k=Annotated[int | None, _field(f"seed / top-k chunks, 1 to {limits.max_k} (default: the strategy's own)",
                                       minimum=1, maximum=limits.max_k)],
        parameters=Annotated[dict[str, Any], _field(
            "strategy parameters by name (each strategy's, with defaults and docs, in list_strategies); "
            f"integers other than k at most {limits.max_parameter} in absolute value")],
        prompt=Annotated[str, _field("the answer prompt: " + "; ".join(
            f"{key} ({PROMPTS[key].about})" for key in prompt_names), enum=prompt_names)],
        limit=Annotated[int, _field(f"how many mentions, relations or members to list (1 to "
                                    f"{limits.max_parameter})")],
        entity_name=Annotated[str, _field("an entity id or name")],
        community_id=Annotated[str, _field("a community id, e.g. community:0:3")],
        document_id=Annotated[str, _field("a document id (its URL for web pages)")],
        cypher_query=Annotated[str, _field("the Cypher query (reads only)")],
        cypher_parameters=Annotated[dict[str, Any] | None, _field("query parameters by name")],
    )


def _field(description: str, **schema: Any) -> Any:
    """A strict argument (`Arguments`) with its description and JSON-schema extras (enum, bounds)."""
    return Field(strict=True, description=description, json_schema_extra=schema or None)


def tool_arguments(kb: KnowledgeBase) -> dict[str, dict[str, tuple[Any, Any]]]:
    """Each tool's arguments in order: name -> (its `Arguments` type, its default; `...` when required). The MCP
    server declares the same in its tool signatures (tests/test_agent_integrations.py compares the schemas)."""
    a = arguments(kb)
    asked = {"question": (a.question, ...), "strategy": (a.strategy, DEFAULT_STRATEGY), "k": (a.k, DEFAULT_K)}
    return {
        "list_strategies": {},
        "retrieve": {**asked, "parameters": (a.parameters | None, None)},
        "answer": {**asked, "prompt": (a.prompt, DEFAULT_PROMPT), "parameters": (a.parameters | None, None)},
        "explain": {**asked, "parameters": (a.parameters | None, None)},
        "cypher": {"query": (a.cypher_query, ...), "parameters": (a.cypher_parameters, None)},
        "entity": {"name": (a.entity_name, ...), "limit": (a.limit, DEFAULT_LIMIT)},
        "community": {"id": (a.community_id, ...), "limit": (a.limit, DEFAULT_LIMIT * 5)},
        "document": {"id": (a.document_id, ...)},
        "status": {},
    }


def descriptions(kb: KnowledgeBase) -> dict[str, str]:
    """Each tool's description; `retrieve`'s lists the strategies, `cypher`'s the row limit of `kb`."""
    return {
        "list_strategies": (
            "Every retrieval strategy: what it is, its parameters with defaults and docs, the enrich steps it needs "
            "and whether they have run on this graph, whether it calls the LLM, and whether it can run now."),
        "retrieve": (
            "The context a strategy retrieves for a question, in order: each item's text, chunk_id, section_id, "
            "doc_id, score and origin (seed, link, walk, ...), facts / reports / key points when the strategy gives "
            "them, the parameters used, the cost and a trace summary (statements run, nodes visited, seeds; links, "
            "chunks and community reports left out as unservable, with notes naming the command that repairs "
            "them). "
            "Only reads. Strategies:\n" + strategy_lines(kb.strategies())),
        "answer": (
            "Retrieve, then answer with the configured LLM and a named prompt: the answer, the model call (tokens, "
            "latency) and the retrieval behind it. Refused with the reason when no LLM is ready (nothing is "
            "installed or built by this call); the answer prompts are also MCP prompts, to answer with your own "
            "model."),
        "explain": (
            "The subgraph behind a retrieval: nodes (chunks with their role, score and rank; sections, documents, "
            "entities, communities) and the relationships the strategy followed, read back from the graph; plus "
            "`browser_cypher`, a statement to paste into Neo4j Browser that draws it."),
        "cypher": (
            "Run a read-only Cypher query (common Cypher; FalkorDB or Neo4j) with $parameters; rows come back as "
            f"JSON, at most {kb.limits.max_rows} (`truncated` says when more matched), vectors left out. A query "
            f"that writes is refused{_read_limit(kb)}. The graph schema and saved queries are resources "
            "(neoweave://schema, neoweave://queries)."),
        "entity": (
            "An entity by id (group:key, e.g. person:lothair ii) or name: type, description, aliases, home "
            "sections, the chunks that mention it (with the surface form and its context) and its strongest "
            "relations. Needs `neoweave enrich kg`."),
        "community": (
            "A community of entities (Leiden, `neoweave enrich communities`) by id: level, size, rating, title, "
            "its report, parent and sub-communities, its members (most mentioned first) and the relations among "
            "them."),
        "document": (
            "A document's outline by id: its properties, its sections in reading order (id, title, anchor, level) "
            "and the links each section makes (anchor text, target section and document)."),
        "status": (
            "The graph's state: store health, schema version and embedding model, node and relationship counts, "
            "the enrich steps that have run, community levels, the request limits, and whether answers can be "
            "asked for."),
    }


def _read_limit(kb: KnowledgeBase) -> str:
    """The cypher tool's time bound, as its description says it ("" without one)."""
    seconds = kb.settings.store.read_timeout
    return f", and one that runs longer than {seconds:g} s is stopped (the read limit, `--timeout`)" if seconds else ""


def strategy_lines(catalog: list[dict[str, Any]]) -> str:
    """One line per strategy: name, what it needs, what it is, its parameter names (from the registry)."""
    lines = []
    for entry in catalog:
        needs = ", ".join(f"enrich {step}" for step in entry["requires"]) or "ingest only"
        llm = "; calls the LLM" if entry["needs_llm"] else ""
        names = ", ".join(parameter["name"] for parameter in entry["parameters"])
        lines.append(f"- {entry['name']} ({needs}{llm}): {entry['about']} Parameters: {names}.")
    return "\n".join(lines)


# -- the checks ------------------------------------------------------------------------------------------------------
def check_request(kb: KnowledgeBase, question: str, strategy: str, k: int | None,
                  parameters: Mapping[str, Any]) -> str:
    """The question, checked with the strategy, k and parameters the way the knowledge base checks them, each
    refusal naming its argument; a strategy that would start the LLM while retrieving is refused unless the LLM is
    ready (a tool call never compiles llama.cpp or assembles weights)."""
    with argument("question"):
        question = kb.limits.question(question)
    typed = check_strategy(kb, strategy, k, parameters)
    from neoweave.registry import STRATEGIES

    if STRATEGIES.get(strategy).wants_llm(typed) and (why := views.llm_unready(kb)):
        raise Refusal(f"strategy: '{strategy}' calls the LLM while retrieving, and {why}")
    return question


def check_strategy(kb: KnowledgeBase, strategy: str, k: int | None, parameters: Mapping[str, Any]
                   ) -> dict[str, Any]:
    """The strategy's parameters typed and bounded by `kb.limits`; a refusal names `strategy`, `k` or
    `parameters` (what a retriever checks when it is made, before any question)."""
    from neoweave.registry import STRATEGIES

    with argument("strategy"):
        STRATEGIES.get(strategy)
    if k is not None:
        with argument("k"):
            kb.limits.k(k)
    with argument("parameters"):
        return kb.request(strategy, k, parameters)


def bounded(kb: KnowledgeBase, name: str, value: int) -> int:
    """A count argument (`limit`) between 1 and the knowledge base's `max_parameter`."""
    with argument(name):
        if value < 1:
            raise NeoweaveError(f"must be at least 1, not {value}")
        return kb.limits.parameter(name, value)


# -- the calls (what each tool returns) ------------------------------------------------------------------------------
def list_strategies(kb: KnowledgeBase) -> dict[str, Any]:
    return {"strategies": views.strategy_listing(kb)}


def retrieve(kb: KnowledgeBase, question: str, strategy: str = DEFAULT_STRATEGY, k: int | None = DEFAULT_K,
             parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    parameters = dict(parameters or {})
    question = check_request(kb, question, strategy, k, parameters)
    with argument(None):
        return views.retrieval_data(kb.retrieve(question, strategy, k, parameters=parameters))


def answer(kb: KnowledgeBase, question: str, strategy: str = DEFAULT_STRATEGY, k: int | None = DEFAULT_K,
           prompt: str = DEFAULT_PROMPT,
           parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    from neoweave.query.prompts import get_prompt

    parameters = dict(parameters or {})
    question = check_request(kb, question, strategy, k, parameters)
    with argument("prompt"):
        get_prompt(prompt)
    if why := views.llm_unready(kb):
        raise Refusal(f"answer needs an LLM: {why}")
    with argument(None):
        return views.answer_data(kb.answer(question, strategy, k, prompt=prompt, parameters=parameters))


def explain(kb: KnowledgeBase, question: str, strategy: str = DEFAULT_STRATEGY, k: int | None = DEFAULT_K,
            parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    parameters = dict(parameters or {})
    question = check_request(kb, question, strategy, k, parameters)
    with argument(None):
        return views.explanation_data(kb.explain(question, strategy, k, parameters=parameters))


def cypher(kb: KnowledgeBase, query: str, parameters: Mapping[str, Any] | None = None) -> dict[str, Any]:
    parameters = dict(parameters or {})
    for key in parameters:
        if not CYPHER_NAME.fullmatch(key):
            raise Refusal(f"parameters: {key!r} is not a Cypher parameter name (letters, digits, _)")
    with argument("query"):
        rows = kb.cypher(query, parameters)
    max_rows = kb.limits.max_rows
    return {"rows": views.plain(rows[:max_rows]), "row_count": min(len(rows), max_rows),
            "truncated": len(rows) > max_rows}


def entity(kb: KnowledgeBase, name: str, limit: int = DEFAULT_LIMIT) -> dict[str, Any]:
    limit = bounded(kb, "limit", limit)
    with argument("name"), kb.reading("the entity's reads"):
        return views.entity_data(kb, name, limit)


def community(kb: KnowledgeBase, id: str, limit: int = DEFAULT_LIMIT * 5) -> dict[str, Any]:
    limit = bounded(kb, "limit", limit)
    with argument("id"), kb.reading("the community's reads"):
        return views.community_data(kb, id, limit)


def document(kb: KnowledgeBase, id: str) -> dict[str, Any]:
    with argument("id"), kb.reading("the document's reads"):
        return views.document_data(kb, id)


def status(kb: KnowledgeBase) -> dict[str, Any]:
    with argument(None):
        return views.status_data(kb)


CALLS: dict[str, Callable[..., dict[str, Any]]] = {
    "list_strategies": list_strategies, "retrieve": retrieve, "answer": answer, "explain": explain,
    "cypher": cypher, "entity": entity, "community": community, "document": document, "status": status}
"""Tool name -> `call(kb, **arguments)`."""
