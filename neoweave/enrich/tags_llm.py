"""LLM tagging with Orion-RAG's two agents: master tags per document, paragraph tags (gist, subjects, domain)
per chunk, each a JSON list of short tags validated by the gateway (schema-constrained, repaired, re-asked).

Prompts follow the paper's instructions in neoweave's words: 1-4 word canonical tags, no punctuation, singular,
no boilerplate; the paragraph agent answers in the paper's order gist, subjects, domain. A failed answer leaves
the element with the fast method's tags and says so (the chunk is retried by the next llm run).
"""

from __future__ import annotations

from typing import Any

from neoweave.llm import structured_each
from neoweave.llm.structured import list_answer
from neoweave.protocols import LLMClient

PROMPT_VERSION = 2
DOCUMENT_CHARS = 2400
"""Leading characters of a document shown to the master-tag agent (its title and opening: the core themes)."""

MASTER_SYSTEM = """You tag documents for a search index.
Give at most {max_tags} tags that together say what the document is about: its main subjects and entities,
its place and time when they matter, and its major subtopics.
Each tag: 1 to 4 words, no punctuation, the canonical English form (as a Wikipedia title would write it),
singular. No near-duplicates, nothing vague ("overview", "various", "information").
Answer with a JSON object only: {{"tags": ["...", "..."]}}"""

PARAGRAPH_SYSTEM = """You tag one paragraph of a document for a search index.
Give exactly 3 tags, in this order:
1. gist: a short title-like summary of the paragraph
2. subjects: the main entity or entities it is about
3. domain: the most specific field it belongs to (history, film, economics, networking, ...)
Each tag: 1 to 4 words, no punctuation, canonical English form; proper nouns capitalised; not numbers only.
Answer with a JSON object only: {"tags": ["...", "...", "..."]}"""
FIELD_NAMES = frozenset({"gist", "subject", "subjects", "domain", "tag", "tags"})
"""The prompt's own words: a small model sometimes answers them as tags (seen: "... > gist > subjects > domain")."""


TagList = list_answer("TagList", "tags", str, max_items=8)


def master_requests(documents: list[tuple[str, str]], max_tags: int) -> list[list[dict[str, str]]]:
    """[(title, text)] -> one chat request per document."""
    system = MASTER_SYSTEM.format(max_tags=max_tags)
    return [[{"role": "system", "content": system},
             {"role": "user", "content": f"Title: {title}\n\n{text[:DOCUMENT_CHARS]}"}] for title, text in documents]


def paragraph_requests(paragraphs: list[tuple[str, str]]) -> list[list[dict[str, str]]]:
    """[(master tag path, text)] -> one chat request per chunk (the master tags give the paragraph's setting)."""
    return [[{"role": "system", "content": PARAGRAPH_SYSTEM},
             {"role": "user", "content": f"Document tags: {master}\n\nParagraph:\n{text}"}]
            for master, text in paragraphs]


def ask(llm: LLMClient, requests: list[list[dict[str, str]]], stage: str, max_tokens: int) -> list[Any]:
    return structured_each(llm, requests, TagList, stage=stage, max_tokens=max_tokens)
