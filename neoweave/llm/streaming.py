"""Streamed completions: the answer's text as the model writes it (the HTTP API's server-sent events).

A `ChatStream` is iterated once for its text pieces; afterwards `result` holds the whole reply as `chat` would
have returned it, recorded in the ledger and cached the same way. A cached answer arrives as one piece. The
request is retried (rate limits, timeouts, connection errors, 5xx) until the stream opens; a failure after text
was shown ends the stream with `LLMError`, since asking again could repeat what the reader already has. A stream
that ends before its first chunk (a server that failed after answering 200) is asked once unstreamed, which
answers or raises the server's error.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import openai

from neoweave.llm.cache import cache_key
from neoweave.llm.ledger import LLMCall

if TYPE_CHECKING:
    from neoweave.llm.gateway import ChatResult, LLMGateway


class ChatStream:
    """The text pieces of one completion; `result` once they are all read."""

    def __init__(self, gateway: LLMGateway, messages: list[dict[str, Any]], params: dict[str, Any], *,
                 stage: str, cache: bool) -> None:
        self.gateway = gateway
        self.messages = messages
        self.params = params
        self.stage = stage
        self.cache = cache
        self.result: ChatResult | None = None

    def __iter__(self) -> Iterator[str]:
        from neoweave.llm.gateway import ChatResult, count_usage

        gateway = self.gateway
        # the cache key of the same request unstreamed: a streamed answer and a plain one share the cache
        key = (cache_key(gateway.model, self.messages, self.params)
               if self.cache and gateway.database is not None else None)
        hit = gateway.cached_reply(key, self.stage)
        if hit is not None:
            self.result = hit
            if hit.text:
                yield hit.text
            return
        call = LLMCall(stage=self.stage, model=gateway.model)
        started = time.perf_counter()
        pieces: list[str] = []
        usage = None
        chunks = 0
        with gateway._slots:
            try:
                stream = gateway.retrying(call)(self._open)
                for chunk in stream:
                    chunks += 1
                    usage = getattr(chunk, "usage", None) or usage
                    if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                        piece = chunk.choices[0].delta.content
                        pieces.append(piece)
                        yield piece
            except openai.OpenAIError as exc:
                raise gateway.failed(call, exc, started) from exc
        if not chunks:  # not even the opening chunk: the server failed after it had answered 200 (llama.cpp's
            # Python server does so for a prompt longer than its context window); asked once unstreamed, it says why
            self.result = gateway._complete(self.messages, self.params, stage=self.stage, cache=self.cache)
            if self.result.text:
                yield self.result.text
            return
        call.latency_ms = (time.perf_counter() - started) * 1000
        text = "".join(pieces)
        count_usage(call, usage, self.messages, text)
        gateway.ledger.record(call)
        self.result = ChatResult(text, call, key)
        gateway._cache_write(self.result)

    def _open(self) -> Any:
        """The stream, asking for the usage at its end; a server that rejects that option is asked without."""
        request = {"model": self.gateway.model, "messages": self.messages, "stream": True, **self.params}
        try:
            return self.gateway.client.chat.completions.create(**request, stream_options={"include_usage": True})
        except openai.BadRequestError as exc:
            if "stream_options" not in str(exc):
                raise
            return self.gateway.client.chat.completions.create(**request)
