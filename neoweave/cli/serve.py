"""`neoweave serve`: the HTTP API and web page over the configured graph."""

from __future__ import annotations

import logging
import time
from typing import Annotated

import typer

from neoweave.cli.common import TIMEOUT_HELP, app, console, settings
from neoweave.errors import NeoweaveError
from neoweave.server.auth import LOCAL_HOSTS, require_token_for


def public_host_warning(host: str, token: str | None = None) -> str | None:
    """What to say about a server bound beyond this machine (`serve`, `mcp --http`): without a token (only with
    --insecure) anyone who reaches it reads the graph; with one, it still travels unencrypted."""
    if host in LOCAL_HOSTS:
        return None
    if token is not None:
        return (f"[yellow]note[/yellow]: serving on {host} with a token; plain HTTP does not encrypt it: put a TLS "
                "proxy in front beyond a trusted network")
    return (f"[yellow]warning[/yellow]: serving on {host} without a token (--insecure): anyone who can reach it "
            "can query the graph")


TOKEN_HELP = ("a shared secret every request must carry (Authorization: Bearer TOKEN; the web page: open "
              "/?token=TOKEN once); required to bind beyond localhost")
INSECURE_HELP = "bind beyond localhost without a token (anyone who reaches the port reads the graph)"


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="address to bind (localhost only by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on")] = 8000,
    max_k: Annotated[int, typer.Option("--max-k", help="largest k a request may ask for")] = 50,
    max_question_chars: Annotated[int, typer.Option("--max-question-chars", help="longest question")] = 2000,
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="largest request body")] = 64 * 1024,
    token: Annotated[str | None, typer.Option("--token", envvar="NEOWEAVE_TOKEN", help=TOKEN_HELP,
                                              show_envvar=True)] = None,
    insecure: Annotated[bool, typer.Option("--insecure", help=INSECURE_HELP)] = False,
    timeout: Annotated[float | None, typer.Option("--timeout", help=TIMEOUT_HELP, show_default=False)] = None,
) -> None:
    """Serve /query, /answer, /explain, /view, /status and a web page that compares strategies side by side
    (read-only; OpenAPI at /docs). While it runs, `neoweave query` and `explain` for this graph use it."""
    try:
        import uvicorn

        from neoweave.server.app import create_app
    except ImportError as exc:
        raise NeoweaveError("serve needs FastAPI and uvicorn", hint="pip install 'neoweave[serve]'") from exc
    from neoweave.cli.remote import announce, withdraw
    from neoweave.kb import KnowledgeBase, Limits

    if not 0 < port < 65536:
        raise NeoweaveError(f"--port must be between 1 and 65535, not {port}")
    for name, value in (("--max-k", max_k), ("--max-question-chars", max_question_chars),
                        ("--max-body-bytes", max_body_bytes)):
        if value < 1:
            raise NeoweaveError(f"{name} must be at least 1, not {value}")
    require_token_for(host, token, insecure=insecure, command="serve")
    if warning := public_host_warning(host, token):
        console.print(warning)
    cfg = settings(read_timeout=timeout)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("neoweave").setLevel(logging.INFO)  # each request's line (the CLI's default is warnings)
    limits = Limits(max_question_chars=max_question_chars, max_k=max_k)
    started = time.perf_counter()
    with KnowledgeBase(cfg, limits=limits, read_only=True) as kb:
        console.print("starting the graph store ...")
        meta = kb.check_graph()
        console.print(f"loading the embedding model {meta['embedding_model']} ...")
        console.file.flush()
        kb.embedder.embed_query("warm up")  # the first request should not pay for loading the model
        kb.walk_index(background=True)  # a walk index behind the graph is rebuilt while requests read the store
        url = f"http://{'127.0.0.1' if host in ('0.0.0.0', '::') else host}:{port}"
        announced = []

        class AnnouncingServer(uvicorn.Server):
            """Records the server in the data directory once it listens, for the command line to find."""

            async def startup(self, sockets=None) -> None:
                await super().startup(sockets=sockets)
                if self.started:
                    announced.append(announce(cfg, url))
                    console.print(f"neoweave serving {url}/ (API docs: /docs), ready after "
                                  f"{time.perf_counter() - started:.1f} s; Ctrl-C stops", highlight=False)
                    console.file.flush()  # a supervisor reading a pipe sees it now

        server = AnnouncingServer(uvicorn.Config(create_app(kb, max_body_bytes=max_body_bytes, token=token),
                                                 host=host, port=port, log_level="warning"))
        try:
            server.run()
        finally:
            for path in announced:
                withdraw(path)
