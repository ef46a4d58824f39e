"""The MCP server over one read-only knowledge base: tools, resources and prompts (MCP Python SDK 2.x, `MCPServer`).

Tools: list_strategies, retrieve, answer, explain, cypher, entity, community, document, status. Resources: the
graph schema and the saved exploration queries. Prompts: one per answer prompt template, filled with the context
a strategy retrieves. What each tool says and does is `contract`'s (descriptions generated from the strategy and
prompt registries and the knowledge base's limits, argument checks, the calls), shared with the LangChain tools;
this module only wires it to the SDK.

Every argument is checked by the knowledge base's own `Limits` and registries (the checks the command line and
the HTTP API make); a refusal is a tool error naming the argument. The knowledge base is opened read-only, so
nothing a caller sends can change the graph; tool calls run on worker threads (the knowledge base is safe to share
between threads for retrieval).
"""

# No `from __future__ import annotations`: the SDK builds each tool's JSON schema from its signature, and the
# parameter descriptions below are computed from this knowledge base (its limits, the registries) when the server
# is made, so the annotations must be evaluated objects, not strings resolved against module globals later.

import contextlib
from collections.abc import Iterator
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer, UserMessage
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.prompts import Prompt
from mcp_types import ToolAnnotations
from pydantic import Field

from neoweave.kb import KnowledgeBase
from neoweave.mcp import contract, views
from neoweave.mcp.contract import DEFAULT_K, DEFAULT_LIMIT, DEFAULT_PROMPT, DEFAULT_STRATEGY, Refusal

INSTRUCTIONS = (
    "neoweave: one knowledge graph built from documents (Document -> Section -> Chunk, hyperlinks between sections, "
    "entities and relations, communities with reports, tags). Start with `status` and `list_strategies`; `retrieve` "
    "returns the context a strategy finds for a question with where each piece came from (chunk, section and "
    "document ids), `explain` the subgraph behind it. `entity`, `community` and `document` read one thing; "
    "`cypher` runs a read-only query (the graph schema and saved queries are resources). Nothing here changes the "
    "graph."
)
READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)


@contextlib.contextmanager
def refusals() -> Iterator[None]:
    """The contract's refusal as the tool error a client sees: its text, naming the argument, no traceback."""
    try:
        yield
    except Refusal as exc:
        raise ToolError(exc.message) from None


def create_server(kb: KnowledgeBase, *, name: str = "neoweave") -> MCPServer:
    """The MCP server over `kb` (open it read-only, as `neoweave mcp` does); its limits bound every call."""
    from neoweave import __version__
    from neoweave.query.prompts import PROMPTS

    server: MCPServer = MCPServer(name, version=__version__, instructions=INSTRUCTIONS)
    described = contract.descriptions(kb)
    types = contract.arguments(kb)
    Question, Strategy, K, Parameters = types.question, types.strategy, types.k, types.parameters
    PromptName, Limit = types.prompt, types.limit
    # the defaults are the contract's (tests/test_agent_integrations.py compares the schemas)

    @server.tool(annotations=READ_ONLY, description=described["list_strategies"])
    def list_strategies() -> dict[str, Any]:
        return contract.list_strategies(kb)

    @server.tool(annotations=READ_ONLY, description=described["retrieve"])
    def retrieve(question: Question, strategy: Strategy = DEFAULT_STRATEGY, k: K = DEFAULT_K,
                 parameters: Parameters | None = None) -> dict[str, Any]:
        with refusals():
            return contract.retrieve(kb, question, strategy, k, parameters)

    @server.tool(annotations=READ_ONLY, description=described["answer"])
    def answer(question: Question, strategy: Strategy = DEFAULT_STRATEGY, k: K = DEFAULT_K,
               prompt: PromptName = DEFAULT_PROMPT, parameters: Parameters | None = None) -> dict[str, Any]:
        with refusals():
            return contract.answer(kb, question, strategy, k, prompt, parameters)

    @server.tool(annotations=READ_ONLY, description=described["explain"])
    def explain(question: Question, strategy: Strategy = DEFAULT_STRATEGY, k: K = DEFAULT_K,
                parameters: Parameters | None = None) -> dict[str, Any]:
        with refusals():
            return contract.explain(kb, question, strategy, k, parameters)

    @server.tool(annotations=READ_ONLY, description=described["cypher"])
    def cypher(query: types.cypher_query, parameters: types.cypher_parameters = None) -> dict[str, Any]:
        with refusals():
            return contract.cypher(kb, query, parameters)

    @server.tool(annotations=READ_ONLY, description=described["entity"])
    def entity(name: types.entity_name, limit: Limit = DEFAULT_LIMIT) -> dict[str, Any]:
        with refusals():
            return contract.entity(kb, name, limit)

    @server.tool(annotations=READ_ONLY, description=described["community"])
    def community(id: types.community_id, limit: Limit = DEFAULT_LIMIT * 5) -> dict[str, Any]:
        with refusals():
            return contract.community(kb, id, limit)

    @server.tool(annotations=READ_ONLY, description=described["document"])
    def document(id: types.document_id) -> dict[str, Any]:
        with refusals():
            return contract.document(kb, id)

    @server.tool(annotations=READ_ONLY, description=described["status"])
    def status() -> dict[str, Any]:
        with refusals():
            return contract.status(kb)

    _resources(server, kb)
    for key in sorted(PROMPTS):
        server.add_prompt(_answer_prompt(kb, key, Question, Strategy))
    return server


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


def _answer_prompt(kb: KnowledgeBase, key: str, question_type: Any, strategy_type: Any) -> Prompt:
    """The answer prompt template `key` as an MCP prompt: the context a strategy retrieves for the question,
    filled into the template the `answer` tool would send (its system part first), for the client's own model.
    Its arguments are checked as the tools check them."""
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
        with refusals():
            question = contract.check_request(kb, question, strategy, top, {})
            with contract.argument(None):
                result = kb.retrieve(question, strategy, top)
        system, user = render(template, result)
        return [UserMessage(f"{system['content']}\n\n{user['content']}")]

    return Prompt.from_function(fill, name=key, title=f"answer prompt {key}",
                                description=f"{template.about or key}: the question with the context a strategy "
                                            "retrieves, as the answer tool would prompt the LLM.")
