"""answer(): retrieve with a strategy, fill a prompt, ask the LLM; one result with trace, citations and full
cost.

Citations come one of two ways, as the prompt says (`PromptTemplate.cite` / `cite_follow_up`). Prompts that
write sentences ask for `[n]` markers inline. The short-answer prompts do not: asked inline, the 1.5B local
model's exact match on HotpotQA-100 fell from 0.48 to 0.37 (docs/answers.md). They ask instead, in one more
turn of the same conversation, which passages support the answer: the answer itself is the one the model gives
without being asked to cite, and the extra turn is short (a local llama.cpp server reuses the conversation's
prefix, so only the question and a few numbers are new tokens).

Either way the citations are then checked against the text (`neoweave.query.citation_check`, no model call): a
cited passage stays when it supports the answer or links the question to one that does, one that does is added,
the rest are dropped; `citation_check` says what changed.
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from neoweave.llm import ContextTooLong, LLMCall
from neoweave.protocols import LLMClient, StreamingLLMClient
from neoweave.query.base import RetrievalResult, Strategy
from neoweave.query.citation_check import CitationCheck, check_citations
from neoweave.query.citations import Citation, citations, cited_numbers, strip_markers
from neoweave.query.prompts import INSUFFICIENT, PromptTemplate, get_prompt, render

if TYPE_CHECKING:
    from neoweave.llm.gateway import ChatResult

log = logging.getLogger(__name__)

R = TypeVar("R")

CITE_MAX_TOKENS = 24
"""The follow-up turn's reply: a few numbers in brackets."""
FIT_ATTEMPTS = 3
"""Times an answer is asked again with fewer passages after the endpoint said its prompt does not fit the model's
context window (each time cut by the numbers the endpoint gave)."""


@dataclass
class AnswerResult:
    question: str
    answer: str
    """The answer without citation markers (what exact match scores, and a short answer shows)."""
    prompt: str
    retrieval: RetrievalResult
    call: LLMCall | None
    """The answer call; None when the strategy answered without one (global search with no helpful point)."""
    citations: list[Citation] = field(default_factory=list)
    """The context items the answer cites, in the order it first cites them; unknown numbers flagged."""
    cited_answer: str = ""
    """The answer with its markers ([1], [2] name `retrieval.items` from 1): where the model put them, or
    after a short answer when they came from the follow-up turn."""
    cite_call: LLMCall | None = None
    """The extra call citations cost, when there was one: the follow-up turn that asked which passages support a
    short answer, or the answer asked again when the model replied with numbers only."""
    context_dropped: int = 0
    """Passages of `retrieval` left out of the prompt, the last (lowest-ranked) ones: the endpoint said the whole
    context did not fit the model's context window. The prompt held `retrieval.items[:-context_dropped]`."""
    citation_check: CitationCheck | None = None
    """What the citation check changed: the model's own numbers, the passages it added and dropped, and why each
    citation is there; None when nothing was checked (no citations asked for, none given, nothing to cite)."""

    @property
    def unknown_citations(self) -> list[int]:
        """Numbers the answer cites that name no retrieved item."""
        return [citation.number for citation in self.citations if not citation.known]

    def citation_rows(self) -> list[dict[str, Any]]:
        """The citations as plain data, each with where to read it (`source`)."""
        return [{**dataclasses.asdict(c), "source": c.source} for c in self.citations]

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "cited_answer": self.cited_answer or self.answer,
                "citations": self.citation_rows(),
                "unknown_citations": self.unknown_citations, "prompt": self.prompt,
                "retrieval": self.retrieval.as_dict(),
                "llm_call": dataclasses.asdict(self.call) if self.call else None,
                "cite_call": dataclasses.asdict(self.cite_call) if self.cite_call else None,
                "context_dropped": self.context_dropped,
                "citation_check": self.citation_check.as_dict() if self.citation_check else None}


def _charge(retrieval: RetrievalResult, call: LLMCall | None) -> None:
    """Add a call's latency and tokens to the retrieval's cost (which holds the calls the strategy made itself,
    such as global search's map step), so one result carries the whole price of the answer."""
    if call is None:
        return
    cost = retrieval.cost
    cost.milliseconds["llm"] = cost.milliseconds.get("llm", 0.0) + call.latency_ms
    cost.count_calls([call], ok=True)


def _follow_up(llm: LLMClient, template: PromptTemplate, messages: list[dict[str, str]] | None, text: str,
               retrieval: RetrievalResult, stage: str) -> ChatResult | None:
    """The follow-up turn's reply, when the prompt cites that way and there is something to cite (an answer
    with no markers of its own that is not Insufficient Information); else None."""
    if (messages is None or not template.cite_follow_up or not retrieval.items or not text.strip()
            or INSUFFICIENT.lower() in text.lower() or cited_numbers(text)):
        return None
    turn = [*messages, {"role": "assistant", "content": text.strip()},
            {"role": "user", "content": template.cite_follow_up}]
    return llm.chat(turn, stage=stage, max_tokens=CITE_MAX_TOKENS)


def finish(question: str, prompt: str, retrieval: RetrievalResult, text: str, call: LLMCall | None, *,
           llm: LLMClient | None = None, messages: list[dict[str, str]] | None = None, cite: bool = False,
           stage: str = "cite", max_tokens: int | None = None, check_citations: bool = True) -> AnswerResult:
    """The answer result of the model's reply `text`: citations read (asked for in a follow-up turn when the
    prompt cites that way) and checked (`check_citations`), markers stripped, every call charged to the
    retrieval's cost. A reply that is only
    citation markers (a small model asked to cite inline can give "[1]" for an answer) is asked again without
    the request for them, and keeps its numbers."""
    _charge(retrieval, call)
    text = text.strip()
    plain = strip_markers(text)
    template = get_prompt(prompt)
    if cite and llm is not None and messages is not None and not plain and cited_numbers(text):
        again = llm.chat(render(template, retrieval), stage=stage, max_tokens=max_tokens)
        return _cited(question, prompt, retrieval, call, again, strip_markers(again.text.strip()), text,
                      check=check_citations)
    reply = _follow_up(llm, template, messages, text, retrieval, stage) if cite and llm is not None else None
    if reply is None:
        return _checked(question, prompt, retrieval, call, plain, text, None, check=cite and check_citations)
    return _cited(question, prompt, retrieval, call, reply, plain, reply.text, check=check_citations)


def _cited(question: str, prompt: str, retrieval: RetrievalResult, call: LLMCall | None, extra: ChatResult,
           plain: str, numbers_text: str, *, check: bool) -> AnswerResult:
    """The answer `plain` with the numbers given in `numbers_text` (markers, or bare numbers when it has none:
    a follow-up reply is meant to be numbers only), the `extra` call that citations cost charged."""
    _charge(retrieval, extra.call)
    numbers = cited_numbers(numbers_text) or list(dict.fromkeys(
        int(n) for n in re.findall(r"\b\d{1,3}\b", numbers_text)))
    markers = "".join(f"[{number}]" for number in numbers)
    cited = f"{plain} {markers}" if markers else plain
    return _checked(question, prompt, retrieval, call, plain, cited, extra.call, check=check)


def _checked(question: str, prompt: str, retrieval: RetrievalResult, call: LLMCall | None, plain: str,
             cited: str, cite_call: LLMCall | None, *, check: bool) -> AnswerResult:
    """The result of the answer `plain` and its marked text `cited`, the markers checked against the passages
    the prompt held when citations were asked for (not for an Insufficient Information answer)."""
    checked = None
    if check and INSUFFICIENT.lower() not in plain.lower():
        cited, checked = check_citations(question, cited, retrieval.items, short=get_prompt(prompt).short)
    return AnswerResult(question, plain, prompt, retrieval, call, citations(cited, retrieval.items), cited,
                        cite_call, citation_check=checked)


def passages_that_fit(retrieval: RetrievalResult, messages: list[dict[str, str]], refusal: ContextTooLong,
                      max_tokens: int | None) -> int | None:
    """How many of the first (best-ranked) passages a prompt can hold so that it fits the window the endpoint
    named, by the tokens per character of the prompt it refused; None when it cannot tell (no window given) or
    not even one passage leaves room. At least one passage fewer than the refused prompt held."""
    count = len(retrieval.items)
    if refusal.window is None or count <= 1:
        return None
    chars = max(1, sum(len(str(message.get("content", ""))) for message in messages))
    tokens = refusal.prompt_tokens or max(refusal.window, chars // 4)
    room = refusal.window - (refusal.completion_tokens or max_tokens or 0) - 32  # a margin for the chat template
    excess_chars = (tokens - room) * chars / tokens * 1.05
    keep, removed = count, 0.0
    while keep > 0 and (removed < excess_chars or keep == count):
        keep -= 1
        removed += len(retrieval.items[keep].text) + 16  # the passage's number and title line
    return keep or None


def _shorter(retrieval: RetrievalResult, messages: list[dict[str, str]], refusal: ContextTooLong, *, prompt: str,
             cite: bool, max_tokens: int | None, attempt: int) -> tuple[RetrievalResult, list[dict[str, str]]]:
    """The retrieval cut to the passages that fit and its prompt, or the refusal raised again when it cannot be."""
    keep = passages_that_fit(retrieval, messages, refusal, max_tokens) if attempt < FIT_ATTEMPTS else None
    if keep is None:
        raise refusal
    log.warning("%s; answering from the first %d of %d passages", refusal.message, keep, len(retrieval.items))
    shown = dataclasses.replace(retrieval, items=retrieval.items[:keep])
    return shown, render(get_prompt(prompt), shown, cite=cite)


def _ask(send: Callable[[list[dict[str, str]]], R], retrieval: RetrievalResult, messages: list[dict[str, str]], *,
         prompt: str, cite: bool, max_tokens: int | None) -> tuple[R, RetrievalResult, list[dict[str, str]]]:
    """What `send` returns for the messages, the retrieval as the prompt showed it and the messages sent: while the
    endpoint refuses the prompt as too long for the model's context window, the lowest-ranked passages are left
    out (a chat call, or a stream opened up to its first piece: a refusal comes before it)."""
    for attempt in range(FIT_ATTEMPTS + 1):
        try:
            return send(messages), retrieval, messages
        except ContextTooLong as refusal:
            retrieval, messages = _shorter(retrieval, messages, refusal, prompt=prompt, cite=cite,
                                           max_tokens=max_tokens, attempt=attempt)
    raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover


def _opened(stream: Any) -> tuple[Any, str | None, Iterator[str]]:
    """The stream with its first piece read (None when it has none) and the rest still to read."""
    pieces = iter(stream)
    return stream, next(pieces, None), pieces


def _whole(result: AnswerResult, retrieval: RetrievalResult) -> AnswerResult:
    """The answer with the whole retrieval it came from, and how many of its passages the prompt left out."""
    result.context_dropped = len(retrieval.items) - len(result.retrieval.items)
    result.retrieval = retrieval
    return result


def prepare(question: str, *, strategy: Strategy, llm: LLMClient, prompt: str = "short_answer", cite: bool = True,
            **overrides: Any) -> tuple[RetrievalResult, list[dict[str, str]] | None]:
    """Retrieve context for `question` and build the named prompt's messages (None when the strategy already
    knows the answer). A strategy that needs the LLM to retrieve gets `llm` when it has none."""
    template = get_prompt(prompt)
    if strategy.wants_llm(strategy.parameters()) and strategy.llm is None:
        strategy = dataclasses.replace(strategy, llm=llm)
    retrieval = strategy.retrieve(question, **overrides)
    if retrieval.answer is not None:  # the strategy knows it cannot answer: no call
        return retrieval, None
    return retrieval, render(template, retrieval, cite=cite)


def answer(question: str, *, strategy: Strategy, llm: LLMClient, prompt: str = "short_answer",
           max_tokens: int | None = None, cite: bool = True, check_citations: bool = True,
           **overrides: Any) -> AnswerResult:
    """Retrieve context for `question`, build the named prompt, and ask the model; with `cite` (the default)
    the result's `citations` name the passages the answer used (asked as the prompt says: inline, or in a
    follow-up turn), checked against the text unless `check_citations` is False (the model's own, unchecked)."""
    retrieval, messages = prepare(question, strategy=strategy, llm=llm, prompt=prompt, cite=cite, **overrides)
    if messages is None:
        return finish(question, prompt, retrieval, retrieval.answer or "", None)
    reply, shown, messages = _ask(lambda sent: llm.chat(sent, stage=f"answer:{strategy.name}", max_tokens=max_tokens),
                                  retrieval, messages, prompt=prompt, cite=cite, max_tokens=max_tokens)
    return _whole(finish(question, prompt, shown, reply.text, reply.call, llm=llm, messages=messages, cite=cite,
                         stage=f"cite:{strategy.name}", max_tokens=max_tokens, check_citations=check_citations),
                  retrieval)


@dataclass
class AnswerEvent:
    """One step of a streamed answer: the retrieval first, then the answer's text in pieces, then the whole
    answer with its citations (the HTTP API sends each as a server-sent event)."""

    kind: Literal["retrieval", "text", "answer"]
    text: str = ""
    retrieval: RetrievalResult | None = None
    answer: AnswerResult | None = None


def answer_stream(question: str, *, strategy: Strategy, llm: LLMClient, prompt: str = "short_answer",
                  max_tokens: int | None = None, cite: bool = True, check_citations: bool = True,
                  **overrides: Any) -> Iterator[AnswerEvent]:
    """`answer`, step by step: the retrieval as soon as it is done, the text as the model writes it (in one
    piece from a client that cannot stream), and the result last (after the follow-up turn, when the prompt
    asks for citations that way). The pieces carry inline markers as the model writes them; the last event's
    answer has them read and stripped."""
    retrieval, messages = prepare(question, strategy=strategy, llm=llm, prompt=prompt, cite=cite, **overrides)
    yield AnswerEvent("retrieval", retrieval=retrieval)
    if messages is None:
        yield AnswerEvent("answer", answer=finish(question, prompt, retrieval, retrieval.answer or "", None))
        return
    stage = f"answer:{strategy.name}"
    if isinstance(llm, StreamingLLMClient):
        (stream, first, rest), shown, messages = _ask(
            lambda sent: _opened(llm.chat_stream(sent, stage=stage, max_tokens=max_tokens)), retrieval, messages,
            prompt=prompt, cite=cite, max_tokens=max_tokens)
        if first is not None:
            yield AnswerEvent("text", text=first)
        for piece in rest:
            yield AnswerEvent("text", text=piece)
        assert stream.result is not None  # set when the stream has been read to its end
        text, call = stream.result.text, stream.result.call
    else:
        reply, shown, messages = _ask(lambda sent: llm.chat(sent, stage=stage, max_tokens=max_tokens), retrieval,
                                      messages, prompt=prompt, cite=cite, max_tokens=max_tokens)
        yield AnswerEvent("text", text=reply.text)
        text, call = reply.text, reply.call
    answered = finish(question, prompt, shown, text, call, llm=llm, messages=messages, cite=cite,
                      stage=f"cite:{strategy.name}", max_tokens=max_tokens, check_citations=check_citations)
    yield AnswerEvent("answer", answer=_whole(answered, retrieval))
