"""Recursive RAG (the thesis's iterative retrieval, 001 l. 772-810, listings 4.7-4.8): rounds of retrieval that
ask the model for what is still missing.

The default, `method="appended"`, is the thesis's own loop: each round searches `k` chunks for the query, stops
when none is new, asks the model for 2-3 sub-questions on what the context does not cover yet (one plain-text
call, a question a line) and appends them to the query; the context is every chunk retrieved (`final_k=0`). No
sub-question is answered on its own. Measured against neoweave's follow-ups on both dev sets, it retrieves more
of the evidence and its answers are level on HotpotQA and closer to the references on the Python docs FAQ
(docs/strategies/profiles.md), so it became the default; `profile="paper"` is the same method.

`method="follow_ups"`: after each round, one call per question asked in that round sees the question, the
sub-questions answered so far and that round's passages, and answers with a short answer and the follow-up
questions still missing (names written out from the answers found, so a bridge entity that is itself an answer,
"the country where the composer of X was born", is searched for by name in the next round). The next round
retrieves for at most `max_follow_ups` new follow-ups. It stops after `rounds` rounds, when the model asks
nothing more (it can answer), or when a round adds nothing new (no chunk not read before and no answer not known
before). The answer prompt gets the sub-questions with their answers and the chunks, every sub-question's best
first (`final_k` of them; neoweave's default before the loop was `final_k=10`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import BaseModel, Field

from neoweave.errors import NeoweaveError
from neoweave.llm import LLMError
from neoweave.llm.gateway import structured_each
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, SubQuestion, Trace, register
from neoweave.query.iterative import absorb, merged_context, normalized, sub_retriever
from neoweave.query.prompts import passages_block

log = logging.getLogger(__name__)
STEP_STAGE = "recursive:step"
STEP_SYSTEM = """You research a question step by step with a search engine over documents.
You get the main question, the sub-questions answered so far, the current sub-question and the passages found
for it. Reply with:
- "answer": a short answer to the current sub-question from the passages (a name, number, date or a few words),
  or "" if the passages do not say;
- "follow_up": the next questions to search for, at most {limit}: the facts still missing to answer the main
  question. Never repeat a question already asked. Write each one on its own, with every name spelled out from
  the answers found. Use [] when the passages and the answers so far already answer the main question.
Example: main question "Who directed the film that was shot in Leland in 1986?", current sub-question the same,
passages saying "Maximum Overdrive was filmed in Leland in 1986" but not who directed it:
{{"answer": "Maximum Overdrive", "follow_up": ["Who directed Maximum Overdrive?"]}}
Answer with a JSON object only: {{"answer": "...", "follow_up": ["..."]}}"""


THESIS_STAGE = "recursive:sub_questions"
THESIS_SYSTEM = """ Based on the following retrieved documents,
   context, and initial query, generate 2-3 specific sub-questions
   that:
   1. Focus on aspects not covered in the current context
   2. Help answer the initial guery more comprehensively
   3. Are specific and targeted"""
"""The thesis's prompt word for word (listing 4.8, its typo included); the user turn is its "Initial Query" and
"Current Context"."""


def thesis_messages(question: str, items: list[ContextItem]) -> list[dict[str, str]]:
    context = "\n".join(item.text for item in items)
    return [{"role": "system", "content": THESIS_SYSTEM},
            {"role": "user", "content": f"Initial Query:{question}\n\nCurrent Context: {context}\n\nSub-questions:"}]


def sub_question_lines(text: str) -> list[str]:
    """The reply's non-empty lines, list markers stripped (the thesis splits the reply on new lines)."""
    lines = [line.strip().lstrip("-*0123456789.) ").strip() for line in text.splitlines()]
    return [line for line in lines if line]


class Step(BaseModel):
    answer: str = ""
    follow_up: list[str] = Field(default_factory=list)


def step_messages(question: str, steps: list[SubQuestion], asked: str, items: list[ContextItem],
                  limit: int) -> list[dict[str, str]]:
    known = "\n".join(f"- {s.question} -> {s.answer}" for s in steps if s.answer) or "(none yet)"
    return [{"role": "system", "content": STEP_SYSTEM.format(limit=limit)},
            {"role": "user", "content": f"Main question: {question}\nAnswered so far:\n{known}\n\n"
                                        f"Current sub-question: {asked}\nPassages:\n{passages_block(items)}"}]


@register
@dataclass
class RecursiveRAG(Strategy):
    name = "recursive"
    reads_link_contexts: ClassVar[bool] = True
    needs_llm: ClassVar[bool] = True

    rounds: int = 5
    """At most this many rounds of retrieval (the thesis's N = 5)."""
    k: int = 7
    """Chunks retrieved per question per round (the thesis's K = 7)."""
    base: str = "naive"
    """The strategy that retrieves for each question (naive, hybrid, larag, kg, ...)."""
    max_follow_ups: int = 2
    """follow_ups: new questions searched per round at most (the model's first ones, earlier ones left out)."""
    final_k: int = 0
    """Chunks given to the answer prompt (follow_ups: every sub-question's best first); 0 = all retrieved (the
    thesis)."""
    method: str = "appended"
    """appended: the thesis's loop, the sub-questions appended to one growing query, none answered on its own;
    follow_ups: each follow-up question searched and answered on its own, its answer's names in the next ones."""
    step_max_tokens: int = 200

    paper: ClassVar[dict[str, Any] | None] = {"rounds": 5, "k": 7, "base": "naive", "final_k": 0,
                                              "method": "appended"}
    paper_source: ClassVar[str] = "thesis, 001 l. 772-810 (listings 4.7 and 4.8: N = 5, K = 7)"

    def validate(self) -> None:
        self._at_least(1, "rounds", "k", "step_max_tokens")
        self._at_least(0, "max_follow_ups", "final_k")
        if self.method not in ("follow_ups", "appended"):
            raise NeoweaveError(f"recursive: method must be follow_ups or appended, got {self.method!r}")
        if self.llm is None:
            raise NeoweaveError("recursive: needs an LLM to write follow-up questions", hint="configure [llm]")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        if self.method == "appended":
            return self._appended(question, trace, cost, result)
        retriever = sub_retriever(self, self.base, k=self.k)
        steps: list[SubQuestion] = []
        contexts: dict[str, list[ContextItem]] = {}
        seen_chunks: set[str] = set()
        asked = {normalized(question)}
        frontier = [question]
        stopped = "rounds"
        for round_ in range(1, self.rounds + 1):
            batch = []
            for index, sub_question in enumerate(frontier, 1):
                sub = retriever.retrieve(sub_question)
                absorb(trace, cost, sub)
                ids = [item.chunk_id for item in sub.items]
                step = SubQuestion(f"r{round_}.{index}", sub_question, asked=sub_question, chunk_ids=ids,
                                   strategy=retriever.name, round=round_,
                                   details={"new_chunks": len(set(ids) - seen_chunks)})
                seen_chunks.update(ids)
                contexts[step.id] = sub.items
                batch.append((step, sub))
            known = {normalized(step.answer) for step in steps if step.answer}
            with cost.timed("step"):
                replies = structured_each(self.llm, [step_messages(question, steps, step.question, sub.items,
                                                                   self.max_follow_ups) for step, sub in batch],
                                          Step, stage=STEP_STAGE, max_tokens=self.step_max_tokens)
            follow_ups: list[str] = []
            for (step, _), reply in zip(batch, replies, strict=True):
                cost.count_calls(reply.calls, reply.ok)
                if not reply.ok:
                    step.details["error"] = reply.error
                    continue
                step.answer = reply.value.answer.strip()
                step.details["follow_up"] = list(reply.value.follow_up)
                for text in reply.value.follow_up:
                    cleaned = " ".join(str(text).split())
                    if cleaned and normalized(cleaned) not in asked:
                        asked.add(normalized(cleaned))
                        follow_ups.append(cleaned)
            steps.extend(step for step, _ in batch)
            frontier = follow_ups[:self.max_follow_ups]
            learned = any(step.answer and normalized(step.answer) not in known for step, _ in batch)
            if round_ > 1 and not learned and not any(step.details["new_chunks"] for step, _ in batch):
                stopped = "nothing new"  # no chunk not read before, no answer not known before
                break
            if not frontier:
                stopped = "can answer" if all(reply.ok for reply in replies) else "no follow-up"
                break
        result.sub_questions = steps
        result.parameters.update(stopped=stopped, rounds_run=max(step.round for step in steps), sub_retriever=self.base)
        items = merged_context(steps, contexts, self.final_k)
        for item in items:
            trace.chunk(item.section_id, item.chunk_id)
        return items

    def _appended(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        """The thesis's loop: search the growing query, stop when nothing new comes back, append 2-3 generated
        sub-questions; the context is every chunk found, in the order found (`final_k` caps it; 0 keeps all)."""
        retriever = sub_retriever(self, self.base, k=self.k)
        query, found, steps = question, [], []
        seen: set[str] = set()
        stopped = "rounds"
        for round_ in range(1, self.rounds + 1):
            sub = retriever.retrieve(query)
            absorb(trace, cost, sub)
            new = [item for item in sub.items if item.chunk_id not in seen]
            step = SubQuestion(f"r{round_}", query, asked=query, chunk_ids=[i.chunk_id for i in sub.items],
                               strategy=retriever.name, round=round_, details={"new_chunks": len(new)})
            steps.append(step)
            if not new:
                stopped = "nothing new"
                break
            seen.update(item.chunk_id for item in new)
            found.extend(new)
            if round_ == self.rounds:
                break
            try:
                with cost.timed("step"):
                    reply = self.llm.chat(thesis_messages(question, found), stage=THESIS_STAGE,
                                          max_tokens=self.step_max_tokens)
            except LLMError as exc:
                cost.llm_failures += 1
                step.details["error"] = str(exc)
                stopped = "no sub-question"
                break
            cost.count_calls([reply.call], ok=True)
            asked = sub_question_lines(reply.text)
            step.details["follow_up"] = asked
            if not asked:
                stopped = "no sub-question"
                break
            query += "\n" + "\n".join(asked)
        result.sub_questions = steps
        result.parameters.update(stopped=stopped, rounds_run=len(steps), sub_retriever=self.base)
        items = found[:self.final_k] if self.final_k else found
        for item in items:
            trace.chunk(item.section_id, item.chunk_id)
        return items
