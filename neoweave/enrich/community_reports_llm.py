"""LLM community reports (microsoft/graphrag's shape): title, summary, rated findings, from a bounded context.

The context of a community is its members (most central first), the relations between them (strongest first)
and excerpts of the chunks that mention most of them, each kind given a share of `context_tokens`. When a
community's raw context does not fit and it has sub-communities already reported (reports are written leaves
first), their reports stand in for their members, largest sub-community first, as graphrag builds its higher
levels; what the sub-reports leave uncovered is added raw. The instruction is one fixed system prompt (stable
cache keys, llama.cpp reuses the evaluated prefix); the context is the user message. A community the model
fails on gets the fast extractive report, marked so the next llm run asks again.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, field_validator

from neoweave.enrich.community_reports import Finding, Report, ReportContext, central_chunks, rank_entities
from neoweave.errors import NeoweaveError
from neoweave.llm.gateway import estimate_tokens, structured_each
from neoweave.protocols import LLMClient

log = logging.getLogger(__name__)

PROMPT_VERSION = 1
MAX_FINDINGS = 5
STAGE = "enrich:communities"

SYSTEM_PROMPT = """You write a report about one community: a group of related entities from a document collection.
The input lists the community's entities, the relations between them, excerpts of the documents that mention
them and, for a large community, the reports of its sub-communities.
Write:
- title: a short, specific name for the community that names its most important entities;
- summary: two to four sentences on what the community is about and how its entities are related;
- findings: up to five key facts, each with a one-line summary and an explanation of one to three sentences;
- rating: how important the community is, from 0 (trivial) to 10 (central, many notable facts);
- rating_explanation: one sentence justifying the rating.
Use only what the input says. Answer with one compact JSON object on a single line:
{"title": ..., "summary": ..., "findings": [{"summary": ..., "explanation": ...}], "rating": ...,
"rating_explanation": ...}"""


def _bounded(default: Any = ..., **bounds: Any) -> Any:
    """Bounds in the JSON schema shown to the model, not enforced when parsing (a long summary is kept)."""
    return Field(default, json_schema_extra=bounds)


class _Finding(BaseModel):
    summary: str = _bounded(maxLength=160)
    explanation: str = _bounded("", maxLength=500)


class ReportAnswer(BaseModel):
    """What the model returns for one community."""

    title: str = _bounded(maxLength=100)
    summary: str = _bounded(maxLength=1000)
    findings: list[_Finding] = _bounded([], maxItems=MAX_FINDINGS)
    rating: float = _bounded(5.0, minimum=0, maximum=10)
    rating_explanation: str = _bounded("", maxLength=300)

    @field_validator("rating", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> float:
        """Small models write "8/10" or 85; a rating outside 0-10 is clamped, not a failed report."""
        if isinstance(value, str):
            value = value.split("/")[0].strip() or 5
        try:
            number = float(value)
        except (TypeError, ValueError):
            return 5.0  # null or an object: the middle of the scale, not a failed report
        if not math.isfinite(number):
            return 5.0
        if number > 10 and number <= 100:
            number /= 10
        return min(max(number, 0.0), 10.0)

    @field_validator("findings", mode="before")
    @classmethod
    def _bare_findings(cls, value: Any) -> Any:
        """Findings given as plain strings are summaries without explanation."""
        if isinstance(value, list):
            return [{"summary": v} if isinstance(v, str) else v for v in value]
        return value


@dataclass
class ChildReport:
    """A sub-community's report, standing in for its members in a parent's context."""

    id: str
    title: str
    summary: str
    findings: list[str]
    members: tuple[str, ...]

    def text(self) -> str:
        lines = [f"## {self.title}", self.summary, *(f"- {finding}" for finding in self.findings)]
        return "\n".join(line for line in lines if line)


@dataclass
class ReportPrompt:
    """The user message for one community and what it was built from."""

    text: str
    chunk_ids: list[str]
    children_used: list[str] = field(default_factory=list)


@dataclass
class LLMReporter:
    """Community reports through the LLM gateway's structured output."""

    llm: LLMClient
    context_tokens: int = 1500
    """Budget of a report's input (entities, relations, excerpts or sub-reports)."""
    max_tokens: int = 600
    """Completion cap per report."""
    entity_share: float = 0.3
    """Share of the budget for member lines (more when the other kinds leave room)."""
    relation_share: float = 0.4
    """Share of the budget for relation lines; excerpts take the rest."""
    excerpt_chars: int = 700
    """Characters of each source chunk shown (chunks are ~one paragraph)."""

    def __post_init__(self) -> None:
        if self.llm is None:
            raise NeoweaveError("the llm report method needs an LLM gateway",
                                hint="configure [llm] or NEOWEAVE_LLM_BASE_URL; the local model is the default")

    @property
    def model_name(self) -> str:
        return f"{self.llm.model}/p{PROMPT_VERSION}/{self.context_tokens}/{self.max_tokens}"

    # the context -----------------------------------------------------------------------------------
    def prompt(self, context: ReportContext, children: list[ChildReport]) -> ReportPrompt:
        budget = self.context_tokens
        names = {e.id: e.name for e in context.entities}
        if children and self._raw_tokens(context, names) > budget:
            return self._from_children(context, children, names, budget)
        return self._raw(context, names, budget, covered=set())

    def _raw_tokens(self, context: ReportContext, names: dict[str, str]) -> int:
        lines = [_entity_line(e) for e in context.entities]
        lines += [_relation_line(r, names) for r in context.relations]
        lines += [_excerpt(c.text, self.excerpt_chars) for c in context.chunks]
        return sum(estimate_tokens(line) + 1 for line in lines)

    def _raw(self, context: ReportContext, names: dict[str, str], budget: int, covered: set[str],
             head: str = "") -> ReportPrompt:
        """Entities, relations and excerpts in their shares of `budget`; a share left unused goes on."""
        entity_lines = [_entity_line(e) for e in rank_entities(context) if e.id not in covered]
        relations = sorted(context.relations, key=lambda r: (-r.weight, r.source_id, r.target_id))
        relation_lines = [_relation_line(r, names) for r in relations
                          if not (r.source_id in covered and r.target_id in covered)]
        centrality = {c.id: rank for rank, c in enumerate(central_chunks(context.chunks))}
        chunks = sorted(context.chunks, key=lambda c: (-c.members, centrality[c.id]))  # most members, then typical
        used = estimate_tokens(head)
        kept_entities, used = _fill(entity_lines, used, min(budget, used + int(budget * self.entity_share)))
        kept_relations, used = _fill(relation_lines, used, min(budget, used + int(budget * self.relation_share)))
        excerpt_lines = [f"[{c.id}] {_excerpt(c.text, self.excerpt_chars)}" for c in chunks]
        kept_excerpts, used = _fill(excerpt_lines, used, budget)
        if used < budget:  # room left: more entities and relations than their shares
            more, used = _fill(entity_lines[len(kept_entities):], used, budget)
            kept_entities += more
            more, used = _fill(relation_lines[len(kept_relations):], used, budget)
            kept_relations += more
        parts = [head] if head else []
        if kept_entities:
            parts.append("Entities:\n" + "\n".join(kept_entities))
        if kept_relations:
            parts.append("Relations:\n" + "\n".join(kept_relations))
        if kept_excerpts:
            parts.append("Document excerpts:\n" + "\n".join(kept_excerpts))
        chunk_ids = [line[1:line.index("]")] for line in kept_excerpts]
        return ReportPrompt("\n\n".join(parts), chunk_ids)

    def _from_children(self, context: ReportContext, children: list[ChildReport], names: dict[str, str],
                       budget: int) -> ReportPrompt:
        """Sub-community reports (largest first) for their members, then raw context for the rest. Unlike graphrag,
        which substitutes only until the context fits, every sub-report that fits three quarters of the budget is
        used: a small model summarises summaries more reliably than it sifts raw relations."""
        texts, covered, used, children_used = [], set(), 0, []
        for child in sorted(children, key=lambda c: (-len(c.members), c.id)):
            text = child.text()
            if used + estimate_tokens(text) > budget * 0.75:
                continue
            texts.append(text)
            children_used.append(child.id)
            covered.update(child.members)
            used += estimate_tokens(text) + 1
        head = "Sub-community reports:\n" + "\n\n".join(texts) if texts else ""
        prompt = self._raw(context, names, budget, covered, head)
        prompt.children_used = children_used
        return prompt

    # the calls -------------------------------------------------------------------------------------
    def reports(self, contexts: list[ReportContext], children: dict[str, list[ChildReport]],
                fallback: Callable[[ReportContext], Report]) -> list[LLMReport]:
        """One report per context, the calls run concurrently within the gateway's limit."""
        prompts = [self.prompt(context, children.get(context.community.id, [])) for context in contexts]
        replies = structured_each(self.llm, [[{"role": "system", "content": SYSTEM_PROMPT},
                                               {"role": "user", "content": p.text}] for p in prompts],
                                  ReportAnswer, stage=STAGE, max_tokens=self.max_tokens, mode="prompt")
        results = []
        for context, prompt, reply in zip(contexts, prompts, replies, strict=True):
            result = LLMReport(context.community.id, prompt)
            result.calls = len(reply.calls)
            result.prompt_tokens = sum(c.prompt_tokens for c in reply.calls)
            result.completion_tokens = sum(c.completion_tokens for c in reply.calls)
            result.seconds = sum(c.latency_ms for c in reply.calls) / 1000
            if reply.ok:
                result.report = self._convert(reply.value, prompt)
            else:
                result.error = (reply.error or "no valid answer")[:300]
                result.report = fallback(context)
            results.append(result)
        return results

    @staticmethod
    def _convert(answer: ReportAnswer, prompt: ReportPrompt) -> Report:
        findings = [Finding(" ".join(f.summary.split()), " ".join(f.explanation.split()))
                    for f in answer.findings[:MAX_FINDINGS] if f.summary.strip()]
        title = " ".join(answer.title.split())[:200] or "Community"
        return Report(title, " ".join(answer.summary.split()), findings, round(answer.rating, 1),
                      " ".join(answer.rating_explanation.split()), list(prompt.chunk_ids))


@dataclass
class LLMReport:
    community_id: str
    prompt: ReportPrompt
    report: Report | None = None
    error: str | None = None
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


def _entity_line(entity: Any) -> str:
    about = " ".join((entity.description or "").split())[:200]
    kind = f" ({entity.type})" if entity.type else ""
    return f"- {entity.name}{kind}" + (f": {about}" if about else "")


def _relation_line(relation: Any, names: dict[str, str]) -> str:
    source = names.get(relation.source_id, relation.source_id)
    target = names.get(relation.target_id, relation.target_id)
    about = " ".join((relation.description or "").split())[:240]
    return f"- {source} -[{relation.type}]- {target}" + (f": {about}" if about else "")


def _excerpt(text: str, chars: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= chars else flat[:chars].rsplit(" ", 1)[0] + " …"


def _fill(lines: list[str], used: int, limit: int) -> tuple[list[str], int]:
    """The lines, in order, that fit under `limit` tokens (a line too long is skipped, not an end)."""
    kept = []
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost <= limit:
            kept.append(line)
            used += cost
    return kept, used
