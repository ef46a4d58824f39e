"""answer(): retrieve with a strategy, fill a prompt, ask the LLM; one result with trace and full cost."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from neoweave.llm import LLMCall
from neoweave.protocols import LLMClient
from neoweave.query.base import RetrievalResult, Strategy
from neoweave.query.prompts import get_prompt, render


@dataclass
class AnswerResult:
    question: str
    answer: str
    prompt: str
    retrieval: RetrievalResult
    call: LLMCall | None
    """The answer call; None when the strategy answered without one (global search with no helpful point)."""

    def as_dict(self) -> dict[str, Any]:
        return {"question": self.question, "answer": self.answer, "prompt": self.prompt,
                "retrieval": self.retrieval.as_dict(),
                "llm_call": dataclasses.asdict(self.call) if self.call else None}


def answer(question: str, *, strategy: Strategy, llm: LLMClient, prompt: str = "short_answer",
           max_tokens: int | None = None, **overrides: Any) -> AnswerResult:
    """Retrieve context for `question`, build the named prompt, and ask the model.

    The LLM call's latency, tokens and count are added to the retrieval's cost (which holds the calls the
    strategy made itself, such as global search's map step), so one result carries the whole price of the
    answer. A strategy that needs the LLM to retrieve gets `llm` when it has none.
    """
    template = get_prompt(prompt)
    if strategy.wants_llm(strategy.parameters()) and strategy.llm is None:
        strategy = dataclasses.replace(strategy, llm=llm)
    retrieval = strategy.retrieve(question, **overrides)
    if retrieval.answer is not None:  # the strategy knows it cannot answer: no call
        return AnswerResult(question, retrieval.answer, prompt, retrieval, None)
    messages = render(template, retrieval)
    reply = llm.chat(messages, stage=f"answer:{strategy.name}", max_tokens=max_tokens)
    cost = retrieval.cost
    cost.milliseconds["llm"] = cost.milliseconds.get("llm", 0.0) + reply.call.latency_ms
    cost.llm_calls += 1
    cost.prompt_tokens += reply.call.prompt_tokens
    cost.completion_tokens += reply.call.completion_tokens
    cost.cached_tokens += reply.call.saved_tokens
    return AnswerResult(question, reply.text.strip(), prompt, retrieval, reply.call)
