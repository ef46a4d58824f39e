"""What the iterative strategies (recursive, pank) share: running another strategy as a sub-retriever with its
trace and cost folded into the caller's, answering a sub-question from its passages, and merging the contexts
of many sub-questions into one bounded context.

A sub-retriever is any registered strategy (naive, larag, kg, community search, ...); the caller names it in
each `SubQuestion.strategy`, so a trace says which retriever answered which step.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.llm import LLMError, LLMUnavailable
from neoweave.protocols import LLMClient
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, SubQuestion, Trace

SUB_ANSWER_STAGE = "subquestion:answer"
SUB_ANSWER_SYSTEM = """You answer one sub-question of a larger question from the given passages.
Answer with a short answer only: a name, a number, a date, a few words, or 'yes' / 'no'. If the passages do not
contain the answer, answer 'unknown'. Do not explain."""


def normalized(text: str) -> str:
    return " ".join(text.lower().split()).rstrip("?. ")


def sub_retriever(owner: Strategy, name: str, **parameters: Any) -> Strategy:
    """The strategy `name` on the owner's store, embedder and LLM; never the owner's own kind (no recursion)."""
    from neoweave.query.base import strategy

    if name == owner.name:
        raise NeoweaveError(f"{owner.name}: a sub-retriever cannot be {name!r} itself")
    chosen = strategy(name, owner.store, owner.embedder, owner.llm)
    known = chosen.parameters()
    return chosen.with_overrides(**{key: value for key, value in parameters.items() if key in known})


def absorb(trace: Trace, cost: Cost, sub: RetrievalResult) -> None:
    """Fold a sub-retrieval's graph trace and cost into the caller's (stages keep their names)."""
    trace.statements.extend(sub.trace.statements)
    for name, ms in sub.trace.statement_ms.items():
        trace.add_statement_ms(name, ms)
    for node in sub.trace.nodes:
        trace.node(node)
    for edge in sub.trace.relationships:
        trace.relationship(*edge)
    for stage, ms in sub.cost.milliseconds.items():
        cost.milliseconds[stage] = cost.milliseconds.get(stage, 0.0) + ms
    cost.add_calls(sub.cost)


def answer_sub_question(llm: LLMClient, question: str, sub: RetrievalResult, max_tokens: int) -> tuple[str, Any]:
    """A short answer to one sub-question from its own retrieval (passages, facts, reports or key points, as
    the answer prompt shows them); 'unknown' answers and failed calls give ''."""
    from neoweave.query.prompts import PromptTemplate, render

    template = PromptTemplate("sub_answer", SUB_ANSWER_SYSTEM, "Context:\n{context}\n\nSub-question: {question}\n"
                                                               "Short answer:")
    shown = dataclasses.replace(sub, question=question)
    try:
        reply = llm.chat(render(template, shown), stage=SUB_ANSWER_STAGE, max_tokens=max_tokens, temperature=0.0)
    except LLMUnavailable:
        raise
    except LLMError:
        return "", None
    text = reply.text.strip().splitlines()[0].strip() if reply.text.strip() else ""
    return ("" if normalized(text) in ("unknown", "insufficient information", "") else text), reply.call


def merged_context(steps: list[SubQuestion], contexts: dict[str, list[ContextItem]], limit: int) -> list[ContextItem]:
    """The sub-questions' contexts as one list: every step's best chunk first, then every step's second, ...
    (so a late hop's evidence is not crowded out by an early one's); each chunk once, noting the steps that
    retrieved it; at most `limit` chunks (0 = all)."""
    merged: dict[str, ContextItem] = {}
    depth = max((len(contexts.get(step.id, [])) for step in steps), default=0)
    for rank in range(depth):
        for step in steps:
            group = contexts.get(step.id, [])
            if rank >= len(group):
                continue
            item = group[rank]
            if item.chunk_id in merged:
                merged[item.chunk_id].details["sub_questions"].append(step.id)
                continue
            merged[item.chunk_id] = dataclasses.replace(item, details={**item.details, "sub_question": step.id,
                                                                          "sub_questions": [step.id]})
    items = list(merged.values())
    return items[:limit] if limit else items

