"""`neoweave mcp`: the knowledge graph as an MCP server (tools, resources, prompts) for assistants and IDEs.

A front end like `neoweave serve`: everything goes through one read-only `KnowledgeBase` and its `Limits`.
`neoweave.mcp.server.create_server(kb)` builds the server; the command line (`neoweave/cli/mcp.py`) runs it
over stdio or streamable HTTP. Importing this package loads nothing: the MCP SDK is imported by `server`;
`contract` (the tools' descriptions, argument checks and calls) and `views` (their JSON) need no SDK, so the
LangChain tools share them.
"""
