"""The MCP server over one read-only knowledge base: tools, resources and prompts (MCP Python SDK 2.x, `MCPServer`).

Tools: list_strategies, retrieve, answer, explain, cypher, entity, community, document, status. Resources: the
graph schema and the saved exploration queries. Prompts: one per answer prompt template, filled with the context
a strategy retrieves. Descriptions are generated from the strategy and prompt registries and the knowledge base's
limits, so they say what `neoweave strategies` says.

Every argument is checked by the knowledge base's own `Limits` and registries (the checks the command line and
the HTTP API make); a refusal is a tool error naming the argument. The knowledge base is opened read-only, so
nothing a caller sends can change the graph; tool calls run on worker threads (the knowledge base is safe to share
between threads for retrieval).
"""

# No `from __future__ import annotations`: the SDK builds each tool's JSON schema from its signature, and the
# parameter descriptions below are computed from this knowledge base (its limits, the registries) when the server
# is made, so the annotations must be evaluated objects, not strings resolved against module globals later.

import contextlib
import re
from collections.abc import Callable, Iterator
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts import Prompt
from mcp_types import ToolAnnotations
from pydantic import Field

from neoweave.errors import NeoweaveError, ReadOnlyViolation
from neoweave.kb import KnowledgeBase
from neoweave.mcp import views

INSTRUCTIONS = (
    "neoweave: one knowledge graph built from documents (Document -> Section -> Chunk, hyperlinks between sections, "
    "entities and relations, communities with reports, tags). Start with `status` and `list_strategies`; `retrieve` "
    "returns the context a strategy finds for a question with where each piece came from (chunk, section and "
    "document ids), `explain` the subgraph behind it. `entity`, `community` and `document` read one thing; "
    "`cypher` runs a read-only query (the graph schema and saved queries are resources). Nothing here changes the "
    "graph."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
CYPHER_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_LIMIT = 10
"""Mentions, relations or members listed by the entity and community tools unless a caller asks for more."""


@contextlib.contextmanager
def argument(name: str | None) -> Iterator[None]:
    """Turn the knowledge base's refusal into a tool error that names the argument it is about."""
    try:
        yield
    except ReadOnlyViolation as exc:
        raise ToolError(f"{name}: {exc.message} (this MCP server only reads; run writes yourself with "
                        "`neoweave cypher --write`)") from None
    except NeoweaveError as exc:
        text = f"{name}: {exc.message}" if name and not exc.message.startswith(f"{name} ") else exc.message
        raise ToolError(f"{text} (hint: {exc.hint})" if exc.hint else text) from None


def create_server(kb: KnowledgeBase, *, name: str = "neoweave") -> MCPServer:
    """The MCP server over `kb` (open it read-only, as `neoweave mcp` does); its limits bound every call."""
    from neoweave import __version__
    from neoweave.query.prompts import PROMPTS

    server: MCPServer = MCPServer(name, version=__version__, instructions=INSTRUCTIONS)
    limits = kb.limits
    catalog = kb.strategies()
    strategy_names = [entry["name"] for entry in catalog]
    prompt_names = sorted(PROMPTS)

    Question = Annotated[str, Field(description=f"the question (at most {limits.max_question_chars} characters)")]
    Strategy = Annotated[str, Field(description="a retrieval strategy (see list_strategies)",
                                    json_schema_extra={"enum": strategy_names})]
    K = Annotated[int | None, Field(description=f"seed / top-k chunks, 1 to {limits.max_k} (default: the "
                                                "strategy's own)", json_schema_extra={"minimum": 1,
                                                                                      "maximum": limits.max_k})]
    Parameters = Annotated[dict[str, Any], Field(
        description="strategy parameters by name (each strategy's, with defaults and docs, in list_strategies); "
                    f"integers other than k at most {limits.max_parameter} in absolute value")]
    PromptName = Annotated[str, Field(description="the answer prompt: " + "; ".join(
        f"{key} ({PROMPTS[key].about})" for key in prompt_names), json_schema_extra={"enum": prompt_names})]
    Limit = Annotated[int, Field(description=f"how many mentions, relations or members to list (1 to "
                                             f"{limits.max_parameter})")]

    def request(question: str, strategy: str, k: int | None, parameters: dict[str, Any]) -> str:
        """The question, checked with the strategy, k and parameters the way the knowledge base checks them, each
        refusal naming its argument; a strategy that would start the LLM while retrieving is refused unless the
        LLM is ready."""
        from neoweave.registry import STRATEGIES

        with argument("question"):
            question = limits.question(question)
        with argument("strategy"):
            cls = STRATEGIES.get(strategy)
        if k is not None:
            with argument("k"):
                limits.k(k)
        with argument("parameters"):
            typed = kb.request(strategy, k, parameters)
        if cls.wants_llm(typed) and (why := views.llm_unready(kb)):
            raise ToolError(f"strategy: '{strategy}' calls the LLM while retrieving, and {why}")
        return question

    def bounded(name: str, value: int) -> int:
        with argument(name):
            if value < 1:
                raise NeoweaveError(f"must be at least 1, not {value}")
            return limits.parameter(name, value)

    @server.tool(annotations=READ_ONLY, description=(
        "Every retrieval strategy: what it is, its parameters with defaults and docs, the enrich steps it needs "
        "and whether they have run on this graph, whether it calls the LLM, and whether it can run now."))
    def list_strategies() -> dict[str, Any]:
        return {"strategies": views.strategy_listing(kb)}

    @server.tool(annotations=READ_ONLY, description=(
        "The context a strategy retrieves for a question, in order: each item's text, chunk_id, section_id, "
        "doc_id, score and origin (seed, link, walk, ...), facts / reports / key points when the strategy gives "
        "them, the parameters used, the cost and a trace summary (statements run, nodes visited, seeds). "
        "Only reads. Strategies:\n" + _strategy_lines(catalog)))
    def retrieve(question: Question, strategy: Strategy = "ppr", k: K = 5,
                 parameters: Parameters | None = None) -> dict[str, Any]:
        parameters = parameters or {}
        question = request(question, strategy, k, parameters)
        with argument(None):
            return views.retrieval_data(kb.retrieve(question, strategy, k, parameters=parameters))

    @server.tool(annotations=READ_ONLY, description=(
        "Retrieve, then answer with the configured LLM and a named prompt: the answer, the model call (tokens, "
        "latency) and the retrieval behind it. Refused with the reason when no LLM is ready (nothing is installed "
        "or built by this call); the answer prompts are also MCP prompts, to answer with your own model."))
    def answer(question: Question, strategy: Strategy = "ppr", k: K = 5, prompt: PromptName = "short_answer",
               parameters: Parameters | None = None) -> dict[str, Any]:
        from neoweave.query.prompts import get_prompt

        parameters = parameters or {}
        question = request(question, strategy, k, parameters)
        with argument("prompt"):
            get_prompt(prompt)
        if why := views.llm_unready(kb):
            raise ToolError(f"answer needs an LLM: {why}")
        with argument(None):
            return views.answer_data(kb.answer(question, strategy, k, prompt=prompt, parameters=parameters))

    @server.tool(annotations=READ_ONLY, description=(
        "The subgraph behind a retrieval: nodes (chunks with their role, score and rank; sections, documents, "
        "entities, communities) and the relationships the strategy followed, read back from the graph; plus "
        "`browser_cypher`, a statement to paste into Neo4j Browser that draws it."))
    def explain(question: Question, strategy: Strategy = "ppr", k: K = 5,
                parameters: Parameters | None = None) -> dict[str, Any]:
        parameters = parameters or {}
        question = request(question, strategy, k, parameters)
        with argument(None):
            return views.explanation_data(kb.explain(question, strategy, k, parameters=parameters))

    @server.tool(annotations=READ_ONLY, description=(
        "Run a read-only Cypher query (common Cypher; FalkorDB or Neo4j) with $parameters; rows come back as "
        f"JSON, at most {limits.max_rows} (`truncated` says when more matched), vectors left out. A query that "
        "writes is refused. The graph schema and saved queries are resources (neoweave://schema, "
        "neoweave://queries)."))
    def cypher(query: Annotated[str, Field(description="the Cypher query (reads only)")],
               parameters: Annotated[dict[str, Any] | None, Field(description="query parameters by name")] = None
               ) -> dict[str, Any]:
        parameters = parameters or {}
        for key in parameters:
            if not CYPHER_NAME.fullmatch(key):
                raise ToolError(f"parameters: {key!r} is not a Cypher parameter name (letters, digits, _)")
        with argument("query"):
            rows = kb.cypher(query, parameters)
        return {"rows": views.plain(rows[: limits.max_rows]), "row_count": min(len(rows), limits.max_rows),
                "truncated": len(rows) > limits.max_rows}

    @server.tool(annotations=READ_ONLY, description=(
        "An entity by id (group:key, e.g. person:lothair ii) or name: type, description, aliases, home sections, "
        "the chunks that mention it (with the surface form and its context) and its strongest relations. Needs "
        "`neoweave enrich kg`."))
    def entity(name: Annotated[str, Field(description="an entity id or name")],
               limit: Limit = DEFAULT_LIMIT) -> dict[str, Any]:
        limit = bounded("limit", limit)
        with argument("name"):
            return views.entity_data(kb, name, limit)

    @server.tool(annotations=READ_ONLY, description=(
        "A community of entities (Leiden, `neoweave enrich communities`) by id: level, size, rating, title, its "
        "report, parent and sub-communities, its members (most mentioned first) and the relations among them."))
    def community(id: Annotated[str, Field(description="a community id, e.g. community:0:3")],
                  limit: Limit = DEFAULT_LIMIT * 5) -> dict[str, Any]:
        limit = bounded("limit", limit)
        with argument("id"):
            return views.community_data(kb, id, limit)

    @server.tool(annotations=READ_ONLY, description=(
        "A document's outline by id: its properties, its sections in reading order (id, title, anchor, level) and "
        "the links each section makes (anchor text, target section and document)."))
    def document(id: Annotated[str, Field(description="a document id (its URL for web pages)")]) -> dict[str, Any]:
        with argument("id"):
            return views.document_data(kb, id)

    @server.tool(annotations=READ_ONLY, description=(
        "The graph's state: store health, schema version and embedding model, node and relationship counts, the "
        "enrich steps that have run, community levels, the request limits, and whether answers can be asked for."))
    def status() -> dict[str, Any]:
        with argument(None):
            return views.status_data(kb)

    _resources(server, kb)
    for key in prompt_names:
        server.add_prompt(_answer_prompt(kb, key, request, Question, Strategy))
    return server


def _strategy_lines(catalog: list[dict[str, Any]]) -> str:
    """One line per strategy: name, what it needs, what it is, its parameter names (from the registry)."""
    lines = []
    for entry in catalog:
        needs = ", ".join(f"enrich {step}" for step in entry["requires"]) or "ingest only"
        llm = "; calls the LLM" if entry["needs_llm"] else ""
        names = ", ".join(parameter["name"] for parameter in entry["parameters"])
        lines.append(f"- {entry['name']} ({needs}{llm}): {entry['about']} Parameters: {names}.")
    return "\n".join(lines)


def _resources(server: MCPServer, kb: KnowledgeBase) -> None:
    """The graph schema, the list of saved queries and each saved query's text."""

    @server.resource("neoweave://schema", name="graph schema", mime_type="application/json", description=(
        "The graph model: labels with their keys, properties and indexed properties; relationship types with "
        "their ends and properties; vector and full-text indexes; and the indexes the store holds now."))
    def schema() -> dict[str, Any]:
        return views.schema_data(kb)

    @server.resource("neoweave://queries", name="saved queries", mime_type="application/json", description=(
        "The saved exploration queries (neoweave/cypher/explore): name, what each shows, its parameters. Read "
        "neoweave://queries/{name} for the text and run it with the cypher tool."))
    def queries() -> list[dict[str, Any]]:
        return views.saved_queries()

    @server.resource("neoweave://queries/{name}", name="saved query", mime_type="text/plain",
                     description="A saved exploration query's Cypher, its doc and parameters as comments.")
    def query(name: str) -> str:
        from neoweave.cypher.registry import explore_query

        saved = explore_query(name)
        header = [f"// {saved.doc}", *(f"// @param {p.name}: {p.type}  {p.doc}" for p in saved.params)]
        return "\n".join(header) + "\n" + saved.text + "\n"


def _answer_prompt(kb: KnowledgeBase, key: str, request: Callable[..., str], question_type: Any,
                   strategy_type: Any) -> Prompt:
    """The answer prompt template `key` as an MCP prompt: the context a strategy retrieves for the question,
    filled into the template the `answer` tool would send (its system part first), for the client's own model.
    `request` checks the arguments as the tools do."""
    from neoweave.query.prompts import PROMPTS, render

    template = PROMPTS[key]

    def fill(question: question_type, strategy: strategy_type = "naive",
             k: Annotated[str | None, Field(description="seed / top-k chunks (a number)")] = None) -> list[UserMessage]:
        top = None
        if k:
            try:
                top = int(k)
            except ValueError:
                raise ToolError(f"k: {k!r} is not a whole number") from None
        question = request(question, strategy, top, {})
        with argument(None):
            result = kb.retrieve(question, strategy, top)
        system, user = render(template, result)
        return [UserMessage(f"{system['content']}\n\n{user['content']}")]

    return Prompt.from_function(fill, name=key, title=f"answer prompt {key}",
                                description=f"{template.about or key}: the question with the context a strategy "
                                            "retrieves, as the answer tool would prompt the LLM.")
