"""A second stage over a retrieval's candidates: one LLM call reorders them by use to the question.

The vector-graph-rag recipe: the graph walk proposes (cheap, recall-oriented), the model chooses. One listwise
call per question: the candidates numbered, each as its title and first words; the answer is a JSON list of
the numbers that hold facts the question needs, most useful first. The chosen passages come first in the
model's order, the others keep the retrieval's order after them, so the caller can always keep k passages; a
call that fails leaves the order unchanged (and is counted as a failure in the cost). Any OpenAI-compatible
endpoint serves, or the local model (docs/strategies/ppr.md gives the cost per question on two cores).
"""

from __future__ import annotations

import logging

from neoweave.llm.structured import list_answer
from neoweave.protocols import LLMClient
from neoweave.query.base import ContextItem, Cost

log = logging.getLogger(__name__)

STAGE = "rerank"

SYSTEM = """You choose the passages that help answer a question.
The passages are numbered. Pick the ones that hold facts needed to answer the question, most useful first.
A question that joins facts (the director of a film, then where the director was born) needs the passage of
each fact; a passage that is only about a similar name does not help.
Answer with a JSON object only: {"passages": [numbers, most useful first]}"""

Ranking = list_answer("Ranking", "passages", int)


def messages(question: str, items: list[ContextItem], passage_words: int) -> list[dict[str, str]]:
    """The listwise prompt: each candidate as `[n] title: first words`."""
    lines = []
    for number, item in enumerate(items, 1):
        words = item.text.split()
        text = " ".join(words[:passage_words]) + (" ..." if len(words) > passage_words else "")
        lines.append(f"[{number}] {item.section_title}: {text}" if item.section_title else f"[{number}] {text}")
    return [{"role": "system", "content": SYSTEM},
            {"role": "user", "content": f"Question: {question}\n\nPassages:\n" + "\n".join(lines)}]


def reorder(items: list[ContextItem], chosen: list[int]) -> list[ContextItem]:
    """The chosen candidates (1-based numbers; repeats and numbers out of range ignored) in the given order,
    then the others in their own order. Each item's `details["rerank"]` is its place among the chosen, or
    None."""
    picked: list[int] = []
    for number in chosen:
        if 1 <= number <= len(items) and number - 1 not in picked:
            picked.append(number - 1)
    order = picked + [i for i in range(len(items)) if i not in picked]
    for place, index in enumerate(picked, 1):
        items[index].details["rerank"] = place
    for index in order[len(picked):]:
        items[index].details["rerank"] = None
    return [items[i] for i in order]


def rerank(llm: LLMClient, question: str, items: list[ContextItem], cost: Cost, *, passage_words: int,
           max_tokens: int) -> list[ContextItem]:
    """`items` reordered by the model (see the module docstring); unchanged when the call fails."""
    if len(items) < 2:
        return items
    with cost.timed(STAGE):
        reply = llm.structured(messages(question, items, passage_words), Ranking, stage=STAGE,
                               max_tokens=max_tokens)
    cost.count_calls(reply.calls, reply.ok)
    if not reply.ok:
        log.warning("rerank: the model gave no usable ranking (%s); the retrieval's order is kept", reply.error)
        return items
    return reorder(items, reply.value.passages)
