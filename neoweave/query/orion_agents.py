"""Orion-RAG's two query-time agents: query expansion (sub-queries) and pruning (irrelevant sentences out).

Both follow the paper's instructions in neoweave's words. Expansion answers a JSON list of short retrieval
queries (the original question is always kept by the caller); pruning answers the kept text only, which is
compared sentence by sentence with the chunk to record what was removed.
"""

from __future__ import annotations

from typing import Any

from neoweave.llm import LLMError
from neoweave.llm.gateway import each_in_flight
from neoweave.llm.structured import list_answer
from neoweave.nlp.sentences import sentences
from neoweave.protocols import LLMClient

REWRITE_STAGE = "orion:rewrite"
PRUNE_STAGE = "orion:prune"

REWRITE_SYSTEM = """You turn a question into short search queries for a document index.
Find the separate things the question needs to know, and write one short query for each: specific entity
names, nouns rather than adjectives, at most 12 words, no punctuation. A simple question needs one query, a
question joining several things needs one per thing.
Answer with a JSON object only: {"queries": ["...", "..."]}"""

PRUNE_SYSTEM = """You clean up a retrieved passage before it is used to answer a question.
Remove the sentences that are irrelevant to the sub-question and do not help answer the original question.
Keep the other sentences exactly as written and in their order, with every name, number and date they hold.
Answer with the kept text only: no comments, no code fence. If nothing is relevant, answer with nothing."""

PRUNE_SENTENCES_SYSTEM = """You clean up a retrieved passage before it is used to answer a question.
The passage is given as numbered sentences. Keep the sentences relevant to the sub-question or helpful to
answer the original question; leave out the others.
Answer with a JSON object only: {"keep": [numbers of the sentences kept, in order]}; {"keep": []} if none."""

SubQueries = list_answer("SubQueries", "queries", str, max_items=8)
KeptSentences = list_answer("KeptSentences", "keep", int)


def rewrite_messages(question: str, max_queries: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": REWRITE_SYSTEM},
            {"role": "user", "content": f"Write at most {max_queries} queries.\nQuestion: {question}"}]


def sub_queries(question: str, answer: list[str], max_queries: int) -> list[str]:
    """The original question, then up to `max_queries` distinct new queries from the model."""
    seen = {" ".join(question.lower().split())}
    queries = [question]
    for text in answer:
        cleaned = " ".join(str(text).split())
        if cleaned and cleaned.lower() not in seen and len(queries) <= max_queries:
            seen.add(cleaned.lower())
            queries.append(cleaned)
    return queries


def prune_sentence_messages(question: str, sub_query: str, tag_path: str, parts: list[str]) -> list[dict[str, str]]:
    numbered = "\n".join(f"{number}. {sentence}" for number, sentence in enumerate(parts, 1))
    return [{"role": "system", "content": PRUNE_SENTENCES_SYSTEM},
            {"role": "user", "content": f"Original question: {question}\nSub-question: {sub_query}\n"
                                        f"Passage tags: {tag_path or '(none)'}\nPassage:\n{numbered}"}]


def kept_text(parts: list[str], keep: list[int]) -> str:
    """The kept sentences, in the passage's order (numbers out of range ignored)."""
    return " ".join(parts[i - 1] for i in sorted(set(keep)) if 1 <= i <= len(parts))


def prune_messages(question: str, sub_query: str, tag_path: str, text: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": PRUNE_SYSTEM},
            {"role": "user", "content": f"Original question: {question}\nSub-question: {sub_query}\n"
                                        f"Passage tags: {tag_path or '(none)'}\nPassage:\n{text}\n\nKept text:"}]


def removed_sentences(original: str, kept: str) -> list[str]:
    """The chunk's sentences the pruned text no longer holds (what the trace shows as removed)."""
    kept_text = " ".join(kept.split())
    return [s for s in sentences(original) if " ".join(s.split()) not in kept_text]


def prune_all(llm: LLMClient, requests: list[list[dict[str, str]]], max_tokens: int) -> list[Any]:
    """One text-pruning call per (sub-query, chunk), as many in flight as the gateway allows; a failed call
    gives None (the chunk is then kept unpruned)."""
    def one(messages: list[dict[str, str]]) -> Any:
        try:
            return llm.chat(messages, stage=PRUNE_STAGE, max_tokens=max_tokens, temperature=0.0)
        except LLMError:
            return None

    return each_in_flight(llm, one, requests)
