"""LangChain tools over a knowledge base: the MCP server's tools as `StructuredTool`s called in-process, for
LangChain and LangGraph agents.

    import neoweave
    from neoweave.integrations.langchain_tools import neoweave_tools
    kb = neoweave.open(".neoweave", read_only=True)
    tools = neoweave_tools(kb)                     # or neoweave_tools(kb, names=["retrieve", "entity"])
    retrieve = next(tool for tool in tools if tool.name == "retrieve")
    retrieve.invoke({"question": "How does the event loop schedule callbacks?", "strategy": "larag", "k": 3})

Same names, descriptions, argument schemas, JSON results and refusals as `neoweave mcp` (both are built from
`neoweave.mcp.contract` and `neoweave.mcp.views`), without a server process: the tools run on the knowledge base
the caller holds. Open it read-only for an agent (the cypher tool refuses writes either way). A refused argument
raises `ToolException` whose message starts with the argument's name; set `tool.handle_tool_error = True` to give
the message to the model instead.

Needs the `langchain` extra (langchain-core).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import BaseModel, create_model

from neoweave.errors import NeoweaveError
from neoweave.mcp import contract

if TYPE_CHECKING:
    from neoweave.kb import KnowledgeBase


def neoweave_tools(kb: KnowledgeBase, *, names: Iterable[str] | None = None, prefix: str = "") -> list[BaseTool]:
    """The tools over `kb` (all of `contract.TOOL_NAMES`, or `names` in that order), each named `prefix + name`
    (a prefix such as "neoweave_" keeps them apart from an agent's other tools). Descriptions and argument bounds
    come from `kb`'s strategies and limits when this is called."""
    chosen = list(contract.TOOL_NAMES if names is None else names)
    unknown = [name for name in chosen if name not in contract.TOOL_NAMES]
    if unknown:
        raise NeoweaveError(f"names: no tool {', '.join(map(repr, unknown))}; the tools: "
                            + ", ".join(contract.TOOL_NAMES))
    described = contract.descriptions(kb)
    fields = contract.tool_arguments(kb)
    tools: list[BaseTool] = []
    for name in chosen:
        schema = create_model(name, **fields[name])
        tools.append(StructuredTool(name=prefix + name, description=described[name], args_schema=schema,
                                    func=_caller(kb, name, schema)))
    return tools


def _caller(kb: KnowledgeBase, name: str, schema: type[BaseModel]) -> Callable[..., dict[str, Any]]:
    """The tool's function: the arguments given, with the schema's defaults for the rest (LangChain passes only
    what the caller gave), to the contract's call; its refusal as a `ToolException`."""

    def call(**given: Any) -> dict[str, Any]:
        values = schema(**given)
        try:
            return contract.CALLS[name](kb, **{field: getattr(values, field) for field in type(values).model_fields})
        except contract.Refusal as exc:
            raise ToolException(exc.message) from None

    call.__name__ = name
    return call
