"""One client for every OpenAI-compatible endpoint: cache, retries, structured output, token accounting.

Every LLM call of the platform goes through `LLMGateway`, whatever the endpoint (OpenAI, Azure OpenAI,
Ollama, vLLM, llama.cpp, or the local model neoweave serves itself). The `openai` client does no retries of
its own here: tenacity retries rate limits, timeouts, connection errors and 5xx with exponential backoff
and jitter, never a 4xx that cannot succeed, and every retry and its cause is recorded on the call.
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import openai
from pydantic import BaseModel
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_random_exponential

from neoweave.errors import NeoweaveError
from neoweave.llm.cache import cache_key
from neoweave.llm.ledger import LLMCall, TokenLedger
from neoweave.llm.store import LLMDatabase
from neoweave.llm.structured import StructuredOutputError, parse_structured, schema_instruction
from neoweave.processes import pid_alive
from neoweave.protocols import LLMClient

if TYPE_CHECKING:
    from neoweave.llm.streaming import ChatStream

log = logging.getLogger(__name__)
T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")
StructuredMode = Literal["json_schema", "json_object_schema", "json_object", "prompt"]
_RETRYABLE_STATUS = frozenset({408, 409, 429})


class LLMError(NeoweaveError):
    """The model could not be reached or refused the request (after retries)."""


class ContextTooLong(LLMError):
    """The endpoint refused the prompt before generating: it does not fit the model's context window. `window`,
    `prompt_tokens` and `completion_tokens` are the server's numbers when its message gives them (OpenAI, vLLM and
    llama.cpp's server do), so a caller can shorten the prompt by what is too much (answers leave out their
    lowest-ranked passages: `neoweave.query.answer`)."""

    def __init__(self, message: str, *, hint: str = "", window: int | None = None,
                 prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
        super().__init__(message, hint=hint)
        self.window = window
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


_WINDOW = re.compile(r"maximum context length is (\d+)")
_ASKED = re.compile(r"(\d+) in the messages, (\d+) in the completion|your messages resulted in (\d+) tokens")


def context_too_long(exc: BaseException, endpoint: str, model: str) -> ContextTooLong | None:
    """The error to raise when `exc` is an endpoint's refusal of a prompt too long for the model (the OpenAI code
    `context_length_exceeded`, or its message); else None."""
    if not isinstance(exc, openai.BadRequestError):
        return None
    text = str(getattr(exc, "message", "") or exc)
    window = _WINDOW.search(text)
    if getattr(exc, "code", None) != "context_length_exceeded" and window is None:
        return None
    asked = _ASKED.search(text)
    prompt = completion = None
    if asked is not None:
        prompt = int(asked.group(1) or asked.group(3))
        completion = int(asked.group(2)) if asked.group(2) else None
    size = int(window.group(1)) if window else None
    return ContextTooLong(
        f"the prompt{f' ({prompt:,} tokens)' if prompt else ''} does not fit the context window of {model}"
        f"{f' ({size:,} tokens)' if size else ''} at {endpoint}",
        hint="ask for fewer chunks (k) or a shorter answer, or use a model with a longer context "
             "(the local model's: llm.local_context)",
        window=size, prompt_tokens=prompt, completion_tokens=completion)


class LLMUnavailable(LLMError):
    """No connection to the endpoint after every retry: the server is down, so no later request of the run can
    succeed either. Raised through structured calls (never turned into one item's fallback), so an enrich
    step stops with what it committed whole instead of quietly doing the rest with the fast method."""


def _unreachable(exc: BaseException) -> bool:
    return isinstance(exc, openai.APIConnectionError) and not isinstance(exc, openai.APITimeoutError)


def is_retryable(exc: BaseException) -> bool:
    """Rate limits, timeouts, connection failures and 5xx may succeed later; other 4xx never will."""
    if isinstance(exc, openai.APIConnectionError | openai.APITimeoutError):
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in _RETRYABLE_STATUS
    return False


def estimate_tokens(text: str) -> int:
    """About four characters per token: for servers that report no usage, and budgets planned before any
    tokenizer runs."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def each_in_flight(llm: LLMClient, call: Callable[[Any], R], requests: list[Any]) -> list[R]:
    """`call(request)` for every request, as many in flight as the gateway's `concurrency` allows; the
    results in request order."""
    if not requests:
        return []
    workers = max(1, min(len(requests), int(getattr(llm, "concurrency", 1))))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        try:
            return list(pool.map(call, requests))
        except BaseException:  # the first failure ends the batch: requests not yet started are dropped
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def structured_each(llm: LLMClient, requests: list[list[dict[str, Any]]], response_model: type[T], **kwargs: Any
                    ) -> list[StructuredResult[T]]:
    """One `structured` call per message list, as many in flight as the gateway's `concurrency` allows (map
    steps, community reports); the results in request order."""
    return each_in_flight(llm, lambda messages: llm.structured(messages, response_model, **kwargs), requests)


@dataclass
class ChatResult:
    text: str
    call: LLMCall
    pending_cache_key: str | None = None  # set when the caller decides whether the answer is worth caching


@dataclass
class StructuredResult(Generic[T]):
    """A validated object, or the reason there is none; never an exception for bad model output."""

    value: T | None
    text: str
    calls: list[LLMCall] = field(default_factory=list)
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.value is not None


class LLMGateway:
    def __init__(
        self,
        client: openai.OpenAI,
        model: str,
        *,
        ledger: TokenLedger | None = None,
        database: LLMDatabase | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        concurrency: int = 2,
        max_retries: int = 4,
        structured_output: StructuredMode = "json_schema",
        backoff_seconds: float = 0.5,
        endpoint: str = "",
        server_pid: int | None = None,
    ) -> None:
        self.client = client
        self.model = model
        self.ledger = ledger or TokenLedger(database=database)
        self.database = database
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.structured_output: StructuredMode = structured_output
        self.backoff_seconds = backoff_seconds
        self.endpoint = endpoint or str(getattr(client, "base_url", ""))
        self.server_pid = server_pid  # the local model server, so evaluations can measure its memory and CPU
        self.concurrency = concurrency
        """Requests in flight at once: callers with many independent calls (map-reduce) use as many workers."""
        self._slots = threading.BoundedSemaphore(concurrency)

    # -- plain chat ------------------------------------------------------------------------------
    def chat(self, messages: list[dict[str, Any]], *, stage: str = "default", max_tokens: int | None = None,
             temperature: float | None = None, cache: bool = True) -> ChatResult:
        """One completion; raises LLMError when the endpoint fails after retries."""
        params = {"temperature": self.temperature if temperature is None else temperature,
                  "max_tokens": max_tokens or self.max_tokens}
        return self._complete(messages, params, stage=stage, cache=cache)

    # -- structured output -----------------------------------------------------------------------
    def structured(self, messages: list[dict[str, Any]], response_model: type[T], *, stage: str = "default",
                   max_tokens: int | None = None, cache: bool = True, mode: StructuredMode | None = None
                   ) -> StructuredResult[T]:
        """A `response_model` instance parsed from the model's answer.

        Uses the server's schema mode when it has one (or `mode` for this call: 'prompt' asks for JSON in
        words only, with no grammar), repairs common JSON breakage, and re-asks once with the validation
        error. A result that still fails comes back with `error` set (and is recorded).
        """
        mode = mode or self.structured_output
        request = list(messages)
        if mode != "json_schema":
            request = self._with_instruction(request, response_model)
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": max_tokens or self.max_tokens}
        schema = response_model.model_json_schema()
        if mode == "json_schema":
            params["response_format"] = {"type": "json_schema", "json_schema": {
                "name": response_model.__name__, "schema": schema, "strict": False}}
        elif mode == "json_object_schema":
            params["response_format"] = {"type": "json_object", "schema": schema}
        elif mode == "json_object":
            params["response_format"] = {"type": "json_object"}

        result: StructuredResult[T] = StructuredResult(None, "")
        for attempt in range(2):
            try:
                reply = self._complete(request, params, stage=stage, cache=cache, defer_cache_write=True)
            except LLMUnavailable:
                raise
            except LLMError as exc:
                if attempt == 0 and "response_format" in params and _rejects_format(exc):
                    log.warning("%s rejected response_format; falling back to schema-in-prompt", self.endpoint)
                    self.structured_output = "prompt"
                    return self.structured(messages, response_model, stage=stage, max_tokens=max_tokens,
                                           cache=cache, mode="prompt")
                result.error = str(exc)
                return result
            result.calls.append(reply.call)
            result.text = reply.text
            try:
                result.value = parse_structured(reply.text, response_model)
                result.error = None
                self._cache_write(reply)  # only valid answers are cached: a failure is asked again next time
                return result
            except StructuredOutputError as exc:
                result.error = str(exc)
                reply.call.error = f"invalid structured output: {exc}"[:500]
                request = [*request, {"role": "assistant", "content": reply.text},
                           {"role": "user", "content": f"That answer was not valid: {exc}. "
                                                       "Reply again with corrected JSON only."}]
        log.info("structured output failed after a re-ask: %s", result.error)
        return result

    @staticmethod
    def _with_instruction(messages: list[dict[str, Any]], model: type[BaseModel]) -> list[dict[str, Any]]:
        instruction = schema_instruction(model)
        if messages and messages[0].get("role") == "system":
            return [{**messages[0], "content": f"{messages[0]['content']}\n\n{instruction}"}, *messages[1:]]
        return [{"role": "system", "content": instruction}, *messages]

    # -- the one path every request takes ---------------------------------------------------------
    def _cache_write(self, reply: ChatResult) -> None:
        if reply.pending_cache_key is not None and self.database is not None:
            self.database.put_response(reply.pending_cache_key, self.model,
                                       {"text": reply.text, "tokens": reply.call.total_tokens})

    def _complete(self, messages: list[dict[str, Any]], params: dict[str, Any], *, stage: str,
                  cache: bool, defer_cache_write: bool = False) -> ChatResult:
        key = cache_key(self.model, messages, params) if cache and self.database is not None else None
        hit = self.cached_reply(key, stage)
        if hit is not None:
            return hit
        call = LLMCall(stage=stage, model=self.model)
        started = time.perf_counter()
        try:
            with self._slots:
                response = self.retrying(call)(self.client.chat.completions.create, model=self.model,
                                               messages=messages, **params)
        except openai.OpenAIError as exc:
            raise self.failed(call, exc, started) from exc
        call.latency_ms = (time.perf_counter() - started) * 1000
        text = (response.choices[0].message.content or "") if response.choices else ""
        count_usage(call, getattr(response, "usage", None), messages, text)
        self.ledger.record(call)
        result = ChatResult(text, call, key)
        if not defer_cache_write:
            self._cache_write(result)
        return result

    # -- streamed chat ---------------------------------------------------------------------------
    def chat_stream(self, messages: list[dict[str, Any]], *, stage: str = "default", max_tokens: int | None = None,
                    temperature: float | None = None, cache: bool = True) -> ChatStream:
        """One completion whose text arrives in pieces (iterate the result); cached, retried and recorded like
        `chat` (retries only until the first piece: text already shown is not asked for again)."""
        from neoweave.llm.streaming import ChatStream

        params = {"temperature": self.temperature if temperature is None else temperature,
                  "max_tokens": max_tokens or self.max_tokens}
        return ChatStream(self, messages, params, stage=stage, cache=cache)

    def cached_reply(self, key: str | None, stage: str) -> ChatResult | None:
        """A cached answer for `key` (recorded as a cache hit), or None."""
        if key is None or self.database is None:
            return None
        hit = self.database.get_response(key)
        if hit is None:
            return None
        call = self.ledger.record(LLMCall(stage=stage, model=self.model, cached=True,
                                          saved_tokens=int(hit.get("tokens", 0))))
        return ChatResult(hit["text"], call)

    def retrying(self, call: LLMCall) -> Retrying:
        """The retry policy of every request (rate limits, timeouts, connection errors, 5xx), noted on `call`."""
        def note_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            call.retries += 1
            call.retry_causes.append(_describe(exc))
            log.warning("LLM call to %s failed (%s); retry %d", self.endpoint, _describe(exc), call.retries)

        return Retrying(stop=stop_after_attempt(self.max_retries + 1),
                        wait=wait_random_exponential(multiplier=self.backoff_seconds, max=30),
                        retry=retry_if_exception(lambda exc: is_retryable(exc) and not self.server_gone()),
                        before_sleep=note_retry, reraise=True)

    def failed(self, call: LLMCall, exc: openai.OpenAIError, started: float) -> LLMError:
        """Record a failed call and the error to raise for it."""
        call.latency_ms = (time.perf_counter() - started) * 1000
        call.error = _describe(exc)
        self.ledger.record(call)
        too_long = context_too_long(exc, self.endpoint, self.model)
        if too_long is not None:
            return too_long
        if _unreachable(exc) and self.server_gone():
            return LLMUnavailable(f"the local model server for {self.model} (pid {self.server_pid}) stopped during "
                                  f"the command: {_describe(exc)}",
                                  hint="rerun the command: it starts the server again, and the answers already "
                                       "received are cached")
        error = LLMUnavailable if _unreachable(exc) else LLMError
        return error(f"LLM request to {self.endpoint} (model {self.model}) failed: {_describe(exc)}",
                     hint=_hint(exc))

    def server_gone(self) -> bool:
        """The local model server this gateway talks to has exited (no retry can reach it)."""
        return self.server_pid is not None and not pid_alive(self.server_pid)


def count_usage(call: LLMCall, usage: Any, messages: list[dict[str, Any]], text: str) -> None:
    """The call's tokens as the server reports them, else estimated (and marked so)."""
    if usage is not None and getattr(usage, "prompt_tokens", None) is not None:
        call.prompt_tokens = int(usage.prompt_tokens)
        call.completion_tokens = int(usage.completion_tokens or 0)
    else:
        call.prompt_tokens = estimate_tokens(" ".join(str(m.get("content", "")) for m in messages))
        call.completion_tokens = estimate_tokens(text)
        call.tokens_estimated = True


def _describe(exc: BaseException | None) -> str:
    if exc is None:
        return "unknown error"
    if isinstance(exc, openai.APIStatusError):  # the server's own message says which parameter or limit
        message = " ".join(str(getattr(exc, "message", "") or "").split())[:300]
        return f"HTTP {exc.status_code} {type(exc).__name__}" + (f": {message}" if message else "")
    return type(exc).__name__ + (f": {exc}" if str(exc) else "")


def _hint(exc: BaseException) -> str:
    if isinstance(exc, openai.AuthenticationError):
        return "check NEOWEAVE_LLM_API_KEY / OPENAI_API_KEY"
    if isinstance(exc, openai.NotFoundError):
        return "check llm.model (for Azure: the deployment name) and llm.base_url"
    if isinstance(exc, openai.APIConnectionError):
        return "is the endpoint up? see `neoweave llm check`"
    return ""


def _rejects_format(exc: LLMError) -> bool:
    cause = exc.__cause__
    return isinstance(cause, openai.BadRequestError) and "response_format" in str(cause).lower()
