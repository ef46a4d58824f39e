"""KHL-RAG's question analysis: keywords, main idea and question type (which sets the KG / paragraph mix).

llm: one structured call answering the three (the paper asks for keywords and a main idea, and classifies the
question as knowledge-based QA, reading comprehension or logical reasoning). fast: the question's keyphrases
(the `rst` step's keyword method), the question itself as its main idea, and the type from cue words.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, Field, field_validator

from neoweave.nlp.extract_fast import FastExtractor
from neoweave.nlp.keyphrases import candidates

STAGE = "khl:analyse"
TYPES = ("knowledge", "reading", "reasoning")
"""Knowledge-based QA, reading comprehension, logical reasoning (the paper's three question types)."""

SYSTEM = """You prepare a question for searching a document collection.
Answer with a JSON object only:
{"keywords": ["2 to 6 keywords: the names and terms the answer depends on"],
 "main_idea": "what the question asks, as one short statement",
 "type": "knowledge | reading | reasoning"}
type: knowledge = a fact about named things (who, what, when, where);
reading = what a text or passage says or means;
reasoning = it must be worked out: a comparison, a cause, a consequence, several steps."""


class QuestionAnalysis(BaseModel):
    keywords: list[str] = Field(default_factory=list, json_schema_extra={"maxItems": 8})
    main_idea: str = ""
    type: str = "knowledge"

    @field_validator("type")
    @classmethod
    def _known(cls, value: str) -> str:
        cleaned = value.strip().lower()
        for name in TYPES:
            if cleaned.startswith(name[:4]):
                return name
        return "knowledge"


@dataclass
class Analysis:
    keywords: list[str]
    main_idea: str
    type: str
    method: str
    reason: str = ""


_READING = re.compile(r"\b(according to|the (passage|text|article|author|paragraph|document)|what does .{1,60} "
                      r"(say|mean|describe|suggest)|in the (text|passage|document)|summari[sz]e|main (idea|point))\b",
                      re.IGNORECASE)
_REASONING = re.compile(r"\b(why|how (does|do|did|can|could|would)|what (causes|caused|would happen|happens if)|"
                        r"explain|compare|difference|more|less|fewer|older|younger|earlier|later|first|longer|"
                        r"shorter|larger|smaller|bigger|higher|lower|both|either|same|than|therefore|"
                        r"consequence|result of|lead to)\b", re.IGNORECASE)


def question_type(question: str) -> tuple[str, str]:
    """(type, reason) from cue words: reading comprehension when the question points at a text, logical
    reasoning when it compares, asks why or what follows, knowledge-based QA otherwise."""
    if found := _READING.search(question):
        return "reading", f"cue '{found.group(0).lower()}'"
    if found := _REASONING.search(question):
        return "reasoning", f"cue '{found.group(0).lower()}'"
    return "knowledge", "a factual question (no comparison, cause or text cue)"


@cache
def _extractor() -> FastExtractor:
    """One spaCy pipeline per process for question keyphrases (loaded on first use, ~2 s)."""
    return FastExtractor(noun_phrases=True, code_names=True)


def fast(question: str) -> Analysis:
    extraction = _extractor().extract([("question", question)])[0]
    keywords = candidates(extraction)[:6]
    kind, reason = question_type(question)
    return Analysis(keywords, question, kind, "fast", reason)


def messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": f"Question: {question}"}]


def from_llm(question: str, value: Any) -> Analysis:
    keywords = list(dict.fromkeys(k.strip() for k in value.keywords if isinstance(k, str) and k.strip()))[:8]
    return Analysis(keywords, value.main_idea.strip() or question, value.type, "llm", "the model's classification")
