"""`neoweave mcp`: the knowledge graph as an MCP server, over stdio (the default) or streamable HTTP."""

from __future__ import annotations

import contextlib
import sys
import time
from typing import TYPE_CHECKING, Annotated

import typer

from neoweave.cli.common import TIMEOUT_HELP, app, err_console, settings
from neoweave.cli.serve import INSECURE_HELP, TOKEN_HELP, public_host_warning
from neoweave.errors import NeoweaveError
from neoweave.kb.limits import Limits

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer


@app.command("mcp")
def mcp_server(
    http: Annotated[bool, typer.Option("--http", help="serve streamable HTTP (at /mcp) instead of stdio")] = False,
    host: Annotated[str, typer.Option("--host", help="--http: address to bind (localhost only by default)")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="--http: port to listen on")] = 8001,
    max_k: Annotated[int, typer.Option("--max-k", help="largest k a call may ask for")] = Limits.max_k,
    max_question_chars: Annotated[int, typer.Option("--max-question-chars", help="longest question")
                                  ] = Limits.max_question_chars,
    max_rows: Annotated[int, typer.Option("--max-rows", help="most rows the cypher tool returns")] = Limits.max_rows,
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="--http: largest request body")
                              ] = 64 * 1024,
    token: Annotated[str | None, typer.Option("--token", envvar="NEOWEAVE_TOKEN", help="--http: " + TOKEN_HELP,
                                              show_envvar=True)] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help="--http: " + INSECURE_HELP)] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help=TIMEOUT_HELP, show_default=False)] = None,
) -> None:
    """Serve the graph to MCP clients (desktop assistants, IDEs): tools to retrieve, explain and answer with any
    strategy, to read entities, communities and documents, and read-only Cypher; the schema and saved queries as
    resources; the answer prompts as prompts. Read-only. Messages go to stderr (over stdio, stdout carries only
    the protocol)."""
    try:
        from neoweave.mcp.server import create_server
    except ImportError as exc:
        if not (exc.name or "").startswith("mcp"):
            raise
        raise NeoweaveError("mcp needs the MCP SDK", hint="pip install 'neoweave[mcp]'") from exc
    from neoweave.kb import KnowledgeBase

    if http and not 0 < port < 65536:
        raise NeoweaveError(f"--port must be between 1 and 65535, not {port}")
    for name, value in (("--max-k", max_k), ("--max-question-chars", max_question_chars), ("--max-rows", max_rows),
                        ("--max-body-bytes", max_body_bytes)):
        if value < 1:
            raise NeoweaveError(f"{name} must be at least 1, not {value}")
    if http:
        from neoweave.server.auth import require_token_for

        require_token_for(host, token, insecure=insecure, command="mcp --http")
    if http and (warning := public_host_warning(host, token)):
        err_console.print(warning)
    limits = Limits(max_question_chars=max_question_chars, max_k=max_k, max_rows=max_rows)
    started = time.perf_counter()
    with KnowledgeBase(settings(read_timeout=timeout), limits=limits, read_only=True) as kb:
        # over stdio, stdout is the protocol's: whatever a library prints while the models load goes to stderr
        with contextlib.redirect_stdout(sys.stderr):
            err_console.print("starting the graph store ...")
            meta = kb.check_graph()
            err_console.print(f"loading the embedding model {meta['embedding_model']} ...")
            kb.embedder.embed_query("warm up")  # the first call should not pay for loading the model
            kb.walk_index(background=True)  # a walk index behind the graph is rebuilt while requests read the store
        server = create_server(kb)
        if http:
            _serve_http(server, host, port, max_body_bytes, started, token)
            return
        err_console.print(f"neoweave mcp on stdio, ready after {time.perf_counter() - started:.1f} s", highlight=False)
        server.run("stdio")  # the SDK points fd 1 at stderr while it serves: stray output misses the wire


def _serve_http(server: MCPServer, host: str, port: int, max_body_bytes: int, started: float,
                token: str | None) -> None:
    """Streamable HTTP at /mcp under uvicorn; DNS-rebinding protection is on for a localhost binding."""
    import uvicorn

    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{f'[{shown}]' if ':' in shown else shown}:{port}/mcp"
    asgi = server.streamable_http_app(host=host, max_request_body_size=max_body_bytes)
    if token is not None:  # every request must carry it (Authorization: Bearer), as on `serve`
        from neoweave.server.auth import RequireToken

        asgi = RequireToken(asgi, token)

    class ReadyServer(uvicorn.Server):
        """Says where it listens once it does (a supervisor reading stderr waits for this line)."""

        async def startup(self, sockets=None) -> None:
            await super().startup(sockets=sockets)
            if self.started:
                err_console.print(f"neoweave mcp serving {url} (streamable HTTP), ready after "
                                  f"{time.perf_counter() - started:.1f} s; Ctrl-C stops", highlight=False)
                err_console.file.flush()

    ReadyServer(uvicorn.Config(asgi, host=host, port=port, log_level="warning")).run()
