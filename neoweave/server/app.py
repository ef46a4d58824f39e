"""`neoweave serve`: a small HTTP API over one graph, and the web page that uses it.

    POST /query    {question, strategy, k?, parameters?}            -> the retrieval (items, trace, cost)
    POST /answer   {question, strategy, k?, parameters?, prompt?}   -> the answer and its retrieval
    POST /explain  {question, strategy, k?, parameters?, answer?}   -> the explanation (nodes, relationships)
    GET  /view?question=...&strategy=...&k=...                      -> the explanation's graph view (HTML)
    GET  /guide                                                     -> a Neo4j Browser guide (`:play URL/guide`)
    GET  /status, GET /strategies, GET / (the page), /docs and /openapi.json (FastAPI's)

Read-only: no endpoint ingests, enriches or runs Cypher. One store connection and one embedder serve every
request (the embedder serialises its own calls); the LLM gateway starts on the first request that needs it.
Requests are bounded: body size, question length, k and every other integer parameter.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from importlib import resources
from typing import Annotated, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse
from pydantic import BaseModel, Field

from neoweave.config import Settings
from neoweave.errors import NeoweaveError

log = logging.getLogger(__name__)


class Ask(BaseModel):
    """A question for one strategy."""

    question: str = Field(description="the question")
    strategy: str = Field("naive", description="a strategy name (GET /strategies)")
    k: int | None = Field(None, description="seed / top-k chunks")
    parameters: dict[str, Any] = Field(default_factory=dict, description="strategy parameters by name")


class AskAnswer(Ask):
    prompt: str = Field("short_answer", description="the answer prompt")


class AskExplain(Ask):
    answer: bool = Field(False, description="also answer, and show the answer with the graph")
    prompt: str = Field("short_answer", description="the answer prompt")
    documents: bool = Field(True, description="show each context chunk's document")


@dataclass(frozen=True)
class ServeLimits:
    """What one request may ask for; the defaults suit a single-machine graph shared by a team."""

    max_body_bytes: int = 64 * 1024
    max_question_chars: int = 2000
    max_k: int = 50
    max_parameter: int = 1000
    """Any other integer parameter (depth, n_links, entities, ...) is capped here."""


class Service:
    """What the endpoints share: the store, the embedder, the LLM gateway (lazily), and the limits."""

    def __init__(self, settings: Settings, store, embedder, limits: ServeLimits) -> None:
        self.settings = settings
        self.store = store
        self.embedder = embedder
        self.limits = limits
        self._llm = None
        self._llm_lock = threading.Lock()

    def llm(self):
        with self._llm_lock:
            if self._llm is None:
                from neoweave.llm import create_gateway

                self._llm = create_gateway(self.settings)
            return self._llm

    def overrides(self, strategy_name: str, k: int | None, parameters: dict[str, Any]) -> dict[str, Any]:
        """The request's parameters, typed and checked like the command line's `-P NAME=VALUE`."""
        from neoweave.registry import STRATEGIES

        cls = STRATEGIES.get(strategy_name)
        if k is not None:
            if not 1 <= k <= self.limits.max_k:
                raise NeoweaveError(f"k must be between 1 and {self.limits.max_k}, not {k}")
            parameters = {**parameters, "k": k}
        known = set(cls(self.store, self.embedder).parameters())
        unknown = sorted(set(parameters) - known)
        if unknown:
            raise NeoweaveError(f"strategy '{strategy_name}' has no parameter {unknown}; its parameters: "
                                f"{sorted(known)}")
        overrides = {}
        for name, value in parameters.items():
            if isinstance(value, dict | list):
                raise NeoweaveError(f"parameter '{name}' must be a number, string or boolean")
            text = str(value).lower() if isinstance(value, bool) else str(value)
            key, parsed = cls.parse_parameter(f"{name}={text}")
            if isinstance(parsed, int) and not isinstance(parsed, bool):
                limit = self.limits.max_k if key == "k" else self.limits.max_parameter
                if abs(parsed) > limit:
                    raise NeoweaveError(f"parameter '{key}' must be at most {limit}, not {parsed}")
            overrides[key] = parsed
        return overrides

    def check_question(self, question: str) -> str:
        question = question.replace("\x00", " ").strip()
        if not question:
            raise NeoweaveError("the question is empty")
        if len(question) > self.limits.max_question_chars:
            raise NeoweaveError(f"the question has {len(question)} characters; at most "
                                f"{self.limits.max_question_chars} are accepted")
        return question

    def retrieve(self, question: str, strategy_name: str, k: int | None, parameters: dict[str, Any],
                 with_answer: bool = False, prompt: str = "short_answer"):
        """(retrieval, answer result or None) with the request's strategy."""
        from neoweave.query import strategy
        from neoweave.registry import STRATEGIES

        question = self.check_question(question)
        from neoweave.query.router import configured

        overrides = configured(self.settings, strategy_name, self.overrides(strategy_name, k, parameters))
        wants_llm = with_answer or STRATEGIES.get(strategy_name).wants_llm(overrides)
        llm = self.llm() if wants_llm else None
        chosen = strategy(strategy_name, self.store, self.embedder, llm, **overrides)
        if with_answer:
            from neoweave.query.answer import answer

            answered = answer(question, strategy=chosen, llm=llm, prompt=prompt)
            return answered.retrieval, answered
        return chosen.retrieve(question), None

    def strategies(self) -> list[dict[str, Any]]:
        from neoweave.registry import STRATEGIES

        listed = []
        for name in STRATEGIES.names():
            cls = STRATEGIES.get(name)
            about = (cls.__doc__ or "").strip().split("\n")[0]
            listed.append({"name": name, "needs_llm": cls.needs_llm, "about": about,
                           "parameters": cls(self.store, self.embedder).parameters()})
        return listed

    def status(self) -> dict[str, Any]:
        counts = self.store.counts()
        return {"store": self.store.health(), "meta": self.store.read_meta(), "nodes": counts.nodes,
                "relationships": counts.relationships}


def create_app(settings: Settings, store, embedder, limits: ServeLimits | None = None):
    """The FastAPI application over an open store and a loaded embedder."""
    service = Service(settings, store, embedder, limits or ServeLimits())
    app = FastAPI(title="neoweave", version=_version(),
                  description="Retrieve, answer and explain over one knowledge graph (read-only).")
    app.state.service = service

    @app.middleware("http")
    async def bounded(request: Request, call_next):
        """Refuse a body above the limit before reading it (a body without a declared length is refused too)."""
        if request.method in ("POST", "PUT", "PATCH"):
            length = request.headers.get("content-length")
            if length is None or not length.isdigit():
                return JSONResponse({"error": "a request body needs a Content-Length"}, status_code=411)
            if int(length) > service.limits.max_body_bytes:
                return JSONResponse({"error": f"request body of {length} bytes is above the limit of "
                                     f"{service.limits.max_body_bytes}"}, status_code=413)
        started = time.perf_counter()
        response = await call_next(request)
        log.info("%s %s %s %.0f ms", request.method, request.url.path, response.status_code,
                 (time.perf_counter() - started) * 1000)
        return response

    @app.exception_handler(NeoweaveError)
    async def neoweave_error(_request: Request, exc: NeoweaveError):
        return JSONResponse({"error": exc.message, "hint": exc.hint}, status_code=400)

    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def page() -> str:
        return resources.files("neoweave.server").joinpath("page.html").read_text(encoding="utf-8")

    @app.get("/guide", response_class=HTMLResponse)
    def guide() -> HTMLResponse:
        """A Neo4j Browser guide through the saved queries: `:play http://HOST:PORT/guide` in Browser."""
        from neoweave.audit.guide import browser_guide

        return HTMLResponse(browser_guide(service.store), headers={"Access-Control-Allow-Origin": "*"})

    @app.get("/status")
    def status() -> dict[str, Any]:
        """Store health, schema and embedding model, counts per label and relationship type."""
        return _jsonable(service.status())

    @app.get("/strategies")
    def strategies() -> list[dict[str, Any]]:
        """Every strategy with its parameters and their defaults."""
        return _jsonable(service.strategies())

    @app.post("/query")
    def query(ask: Ask) -> dict[str, Any]:
        """Retrieve: the context in order, where each piece came from, the trace and the cost."""
        result, _ = service.retrieve(ask.question, ask.strategy, ask.k, ask.parameters)
        return _jsonable(result.as_dict())

    @app.post("/answer")
    def answer(ask: AskAnswer) -> dict[str, Any]:
        """Retrieve, then answer with the configured LLM."""
        _, answered = service.retrieve(ask.question, ask.strategy, ask.k, ask.parameters, True, ask.prompt)
        return _jsonable(answered.as_dict())

    @app.post("/explain")
    def explain(ask: AskExplain) -> dict[str, Any]:
        """The subgraph behind the retrieval: nodes with roles and scores, relationships with their meaning."""
        return _jsonable(_explain(service, ask.question, ask.strategy, ask.k, ask.parameters, ask.answer,
                                  ask.prompt, ask.documents).as_dict())

    @app.get("/view", response_class=HTMLResponse)
    def view(question: Annotated[str, Query()], strategy: Annotated[str, Query()] = "naive",
             k: Annotated[int | None, Query()] = None, answer: Annotated[bool, Query()] = False,
             prompt: Annotated[str, Query()] = "short_answer") -> str:
        """The explanation as a graph page (self-contained: the renderer is inlined)."""
        from neoweave.audit import render_html

        return render_html(_explain(service, question, strategy, k, {}, answer, prompt, True))

    return app


def _explain(service: Service, question: str, strategy_name: str, k: int | None, parameters: dict[str, Any],
             with_answer: bool, prompt: str, documents: bool):
    from neoweave.audit import explain

    result, answered = service.retrieve(question, strategy_name, k, parameters, with_answer, prompt)
    return explain(result, service.store, answer=answered.answer if answered else None, documents=documents)


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
