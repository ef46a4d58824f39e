"""`neoweave serve`: a small HTTP API over one graph, and the web page that uses it.

    POST /query    {question, strategy, k?, parameters?}            -> the retrieval (items, trace, cost)
    POST /answer   {question, strategy, k?, parameters?, prompt?, cite?} -> the answer, its citations, its retrieval
    POST /answer/stream (same body)                                 -> server-sent events: retrieval, text..., answer
    POST /explain  {question, strategy, k?, parameters?, answer?}   -> the explanation (nodes, relationships)
    GET  /view?question=...&strategy=...&k=...                      -> the explanation's graph view (HTML)
    GET  /assets/neoweave-viz-<version>.js|.css                     -> the renderer the views share
    GET  /guide                                                     -> a Neo4j Browser guide (`:play URL/guide`)
    GET  /status, GET /strategies, GET / (the page), /docs and /openapi.json (FastAPI's)

Read-only: no endpoint ingests, enriches or runs Cypher, and the knowledge base behind it is opened read-only.
One knowledge base serves every request (the embedder serialises its own calls; the LLM gateway starts on the
first request that needs it). Requests are bounded by the body size here and by the knowledge base's limits
(question length, k, every other integer parameter), the same limits as the command line's, and in time by the
read limit (`store.read_timeout`: a request past it is a 504 naming the limit).
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Iterator
from importlib import resources
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field

from neoweave.errors import NeoweaveError, ReadTimeout
from neoweave.kb import KnowledgeBase

if TYPE_CHECKING:
    from neoweave.query.answer import AnswerEvent

log = logging.getLogger(__name__)


class Ask(BaseModel):
    """A question for one strategy. Strict, as the MCP tools are: `"5"` for `k` is refused, not converted."""

    model_config = ConfigDict(strict=True)

    question: str = Field(description="the question")
    strategy: str = Field("naive", description="a strategy name (GET /strategies)")
    k: int | None = Field(None, description="seed / top-k chunks")
    parameters: dict[str, Any] = Field(default_factory=dict, description="strategy parameters by name")


class AskAnswer(Ask):
    prompt: str = Field("short_answer", description="the answer prompt")
    cite: bool = Field(True, description="ask the model for the numbers of the passages it used (citations)")


class AskExplain(Ask):
    answer: bool = Field(False, description="also answer, and show the answer with the graph")
    prompt: str = Field("short_answer", description="the answer prompt")
    documents: bool = Field(True, description="show each context chunk's document")


MAX_BODY_BYTES = 64 * 1024
"""Largest request body accepted (the question and parameters of one request fit in far less)."""


def create_app(kb: KnowledgeBase, *, max_body_bytes: int = MAX_BODY_BYTES, token: str | None = None):
    """The FastAPI application over a knowledge base (opened read-only by `neoweave serve`): its limits bound
    every request, as they bound the command line's; with `token`, every request must carry it
    (`neoweave.server.auth`)."""
    app = FastAPI(title="neoweave", version=_version(),
                  description="Retrieve, answer and explain over one knowledge graph (read-only).")
    app.state.kb = kb

    @app.middleware("http")
    async def bounded(request: Request, call_next):
        """Refuse a body above the limit before reading it (a body without a declared length is refused too)."""
        if request.method in ("POST", "PUT", "PATCH"):
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return JSONResponse({"error": "a request body needs a Content-Length"}, status_code=411)
            if int(length) > max_body_bytes:
                return JSONResponse({"error": f"request body of {length} bytes is above the limit of "
                                     f"{max_body_bytes}"}, status_code=413)
        started = time.perf_counter()
        response = await call_next(request)
        log.info("%s %s %s %.0f ms", request.method, request.url.path, response.status_code,
                 (time.perf_counter() - started) * 1000)
        return response

    @app.exception_handler(NeoweaveError)
    async def neoweave_error(_request: Request, exc: NeoweaveError):
        return JSONResponse({"error": exc.message, "hint": exc.hint}, status_code=400)

    @app.exception_handler(ReadTimeout)
    async def read_timeout(_request: Request, exc: ReadTimeout):
        """A request whose graph reads ran past the read limit (`store.read_timeout`, `serve --timeout`): 504, the
        store having stopped them (a well-formed request, so not a 400; the server is not overloaded, so not 503)."""
        return JSONResponse({"error": exc.message, "hint": exc.hint}, status_code=504)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(_request: Request, exc: RequestValidationError):
        """Malformed JSON or a field of the wrong type: 400 naming the field, like every other refusal."""
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
        return JSONResponse({"error": f"{where}: {first.get('msg', 'invalid request')}",
                             "hint": "see /docs for the request schema"}, status_code=400)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        """The web app, its input bounds those of the knowledge base's limits (as every front end's)."""
        text = resources.files("neoweave.server").joinpath("page.html").read_text(encoding="utf-8")
        return (text.replace("{{max_question_chars}}", str(kb.limits.max_question_chars))
                .replace("{{max_k}}", str(kb.limits.max_k)))

    @app.get("/guide", response_class=HTMLResponse)
    def guide() -> HTMLResponse:
        """A Neo4j Browser guide through the saved queries: `:play http://HOST:PORT/guide` in Browser."""
        from neoweave.audit.guide import browser_guide

        return HTMLResponse(browser_guide(kb.store), headers={"Access-Control-Allow-Origin": "*"})

    @app.get("/status")
    def status() -> dict[str, Any]:
        """Store health, schema and embedding model, counts per label and relationship type."""
        return _jsonable(kb.status())

    @app.get("/strategies")
    def strategies() -> list[dict[str, Any]]:
        """Every strategy with its parameters and their defaults."""
        return _jsonable(kb.strategies())

    @app.post("/query")
    def query(ask: Ask) -> dict[str, Any]:
        """Retrieve: the context in order, where each piece came from, the trace and the cost."""
        return _jsonable(kb.retrieve(ask.question, ask.strategy, ask.k, parameters=ask.parameters).as_dict())

    @app.post("/answer")
    def answer(ask: AskAnswer) -> dict[str, Any]:
        """Retrieve, then answer with the configured LLM."""
        answered = kb.answer(ask.question, ask.strategy, ask.k, prompt=ask.prompt, parameters=ask.parameters,
                             cite=ask.cite)
        return _jsonable(answered.as_dict())

    @app.post("/answer/stream", response_class=StreamingResponse,
              responses={200: {"content": {"text/event-stream": {}},
                               "description": "events `retrieval` (as /query returns it), `text` ({text}: the "
                                              "answer's next piece), `answer` (as /answer returns it, with the "
                                              "citations), or `error` ({error, hint}) if it fails midway"}})
    def answer_stream(ask: AskAnswer) -> StreamingResponse:
        """Retrieve, then answer, streamed as server-sent events: the context first, the answer's text as the
        model writes it, the answer with its citations last. A refused request is a 400 before any event."""
        events = kb.answer_stream(ask.question, ask.strategy, ask.k, prompt=ask.prompt, parameters=ask.parameters,
                                  cite=ask.cite)
        return StreamingResponse(_server_sent(events), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.post("/explain")
    def explain(ask: AskExplain) -> dict[str, Any]:
        """The subgraph behind the retrieval: nodes with roles and scores, relationships with their meaning."""
        return _jsonable(kb.explain(ask.question, ask.strategy, ask.k, answer=ask.answer, prompt=ask.prompt,
                                    documents=ask.documents, parameters=ask.parameters).as_dict())

    @app.get("/view", response_class=HTMLResponse)
    def view(question: Annotated[str, Query()], strategy: Annotated[str, Query()] = "naive",
             k: Annotated[int | None, Query()] = None, answer: Annotated[bool, Query()] = False,
             prompt: Annotated[str, Query()] = "short_answer") -> str:
        """The explanation as a graph page; the renderer it loads is served under /assets/."""
        return kb.explain(question, strategy, k, answer=answer, prompt=prompt).to_html(assets_prefix="/assets/")

    @app.get("/assets/{name}", include_in_schema=False)
    def asset(name: str) -> Response:
        """The graph pages' shared renderer (neoweave-viz-<version>.js/.css), cached by the browser."""
        files = _renderer_files()
        if name not in files:
            return JSONResponse({"error": f"no asset {name!r}", "hint": f"assets: {', '.join(sorted(files))}"},
                                status_code=404)
        text, media_type = files[name]
        return Response(text, media_type=media_type, headers={"Cache-Control": "public, max-age=86400"})

    if token is not None:  # added last: the outermost layer, so a request without it reaches nothing
        from neoweave.server.auth import RequireToken

        app.add_middleware(RequireToken, token=token)
    return app


@functools.cache
def _renderer_files() -> dict[str, tuple[str, str]]:
    from neoweave.audit.view import renderer_assets

    assets = renderer_assets()
    if assets is None:
        return {}
    script_name, style_name = assets.names
    return {script_name: (assets.script, "text/javascript"), style_name: (assets.style, "text/css")}


def _server_sent(events: Iterator[AnswerEvent]) -> Iterator[str]:
    """Each answer event as a server-sent event (`event:` its kind, `data:` one line of JSON); an error after
    the response has started becomes an `error` event, since the status code is already sent."""
    def event(kind: str, data: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps(_jsonable(data), ensure_ascii=False)}\n\n"

    try:
        for step in events:
            if step.kind == "retrieval" and step.retrieval is not None:
                yield event("retrieval", step.retrieval.as_dict())
            elif step.kind == "text":
                yield event("text", {"text": step.text})
            elif step.answer is not None:
                yield event("answer", step.answer.as_dict())
    except NeoweaveError as exc:
        yield event("error", {"error": exc.message, "hint": exc.hint})
    except Exception as exc:  # reported to the reader, logged with its traceback here
        log.exception("streamed answer failed")
        yield event("error", {"error": f"{type(exc).__name__}: {exc}", "hint": "see the server's log"})


def _jsonable(value: Any) -> Any:
    """Plain JSON types (tuples become lists, datetimes and other values their text)."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


def _version() -> str:
    from neoweave import __version__

    return __version__
