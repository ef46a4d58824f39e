"""`neoweave serve`: the HTTP API and web page over the configured graph."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from neoweave.cli.common import app, console, open_store, settings
from neoweave.errors import NeoweaveError

LOCAL_HOSTS = ("127.0.0.1", "localhost", "::1")


@app.command()
def serve(
    host: Annotated[str, typer.Option("--host", help="address to bind (localhost only by default)")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="port to listen on")] = 8000,
    max_k: Annotated[int, typer.Option("--max-k", help="largest k a request may ask for")] = 50,
    max_question_chars: Annotated[int, typer.Option("--max-question-chars", help="longest question")] = 2000,
    max_body_bytes: Annotated[int, typer.Option("--max-body-bytes", help="largest request body")] = 64 * 1024,
) -> None:
    """Serve /query, /answer, /explain, /view, /status and a web page that compares strategies side by side
    (read-only; OpenAPI at /docs)."""
    try:
        import uvicorn

        from neoweave.server.app import ServeLimits, create_app
    except ImportError as exc:
        raise NeoweaveError("serve needs FastAPI and uvicorn", hint="pip install 'neoweave[serve]'") from exc
    from neoweave.embeddings import Embedder
    from neoweave.ingest.link_contexts import embed_all_link_contexts

    if not 0 < port < 65536:
        raise NeoweaveError(f"--port must be between 1 and 65535, not {port}")
    for name, value in (("--max-k", max_k), ("--max-question-chars", max_question_chars),
                        ("--max-body-bytes", max_body_bytes)):
        if value < 1:
            raise NeoweaveError(f"{name} must be at least 1, not {value}")
    if host not in LOCAL_HOSTS:
        console.print(f"[yellow]warning[/yellow]: serving on {host}: anyone who can reach it can query the graph "
                      "(there is no authentication; put a proxy with one in front)")
    cfg = settings()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    with open_store() as store:
        if store.read_meta() is None:
            raise NeoweaveError("the graph is empty", hint="run `neoweave ingest PATH` first")
        embedder = Embedder(cfg.embedding.model)
        store.check_meta(cfg.embedding.model, embedder.dimension)
        embedded = embed_all_link_contexts(store, embedder, progress=False)  # before serving: queries only read
        if embedded:
            console.print(f"embedded the context of {embedded} links")
        limits = ServeLimits(max_body_bytes=max_body_bytes, max_question_chars=max_question_chars, max_k=max_k)
        console.print(f"neoweave serving http://{host}:{port}/ (API docs: /docs); Ctrl-C stops")
        uvicorn.run(create_app(cfg, store, embedder, limits), host=host, port=port, log_level="warning")
