"""Community global search (microsoft/graphrag's global search; the thesis's Community-Graph RAG, global side).

1. Take the community reports of one level (and shallower communities not split further, so every clustered
   entity is covered once), optionally only the `max_reports` closest to the question. The level is fixed, or
   (`level_choice=leaf_or_top`, PankRAG) the leaf or the top level, whichever matches the question better.
2. Shuffle them (seeded) into batches that fit `map_context_tokens`; the map step asks the LLM for the key
   points each batch holds for the question, each scored 0-100 for helpfulness. Calls run concurrently
   within the gateway's limit.
3. Drop points scored 0 or below `min_score`; keep the best, highest first, within `reduce_context_tokens`:
   they are the context of the reduce step, which is the answer call (`answer()` with any prompt; the
   `global_reduce` prompt writes graphrag's synthesised answer). No point left: the answer is
   "Insufficient Information" without a reduce call.

Needs `neoweave enrich communities` and an LLM gateway. A report older than a change to its members or citing a
deleted chunk is withdrawn (not mapped; noted in the trace) until `neoweave enrich communities` rewrites it.
"""

from __future__ import annotations

import logging
import math
import random
import time
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator

from neoweave.errors import NeoweaveError
from neoweave.llm.gateway import estimate_tokens, structured_each
from neoweave.query.base import ContextItem, Cost, KeyPoint, RetrievalResult, Strategy, Trace, register
from neoweave.query.prompts import INSUFFICIENT

log = logging.getLogger(__name__)

MAP_STAGE = "query:community_global:map"
MAP_SYSTEM_PROMPT = """You help answer a question about a document collection from community reports
(summaries of groups of related entities in the collection).
List the key points of the reports that help answer the question. For each point give:
- description: the point, with the facts from the reports that support it (names, dates, numbers as written);
- score: from 0 to 100, how important the point is for answering the question.
Use only the reports. If they do not help answer the question, give one point "I don't know" with score 0.
Answer with one compact JSON object on a single line: {"points": [{"description": ..., "score": ...}]}"""


class _Point(BaseModel):
    description: str = Field(json_schema_extra={"maxLength": 600})
    score: int = Field(0, json_schema_extra={"minimum": 0, "maximum": 100})

    @field_validator("score", mode="before")
    @classmethod
    def _clamp(cls, value: Any) -> int:
        """Scores written as "85", 85.0 or 0.85 (a fraction) become 0-100 integers."""
        try:
            number = float(str(value).strip().rstrip("%") or 0)
        except ValueError:
            return 0  # "high", null: not a score, so not a point
        if not math.isfinite(number):
            return 0
        if 0 < number <= 1 and not float(number).is_integer():
            number *= 100
        return int(min(max(round(number), 0), 100))


class MapAnswer(BaseModel):
    """The map step's answer for one batch of reports."""

    points: list[_Point] = Field(default_factory=list, json_schema_extra={"maxItems": 5})

    @field_validator("points", mode="before")
    @classmethod
    def _bare(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"description": v, "score": 50} if isinstance(v, str) else v for v in value]
        return value


LEVEL_CHOICES = ("fixed", "leaf_or_top")
_ALL_REPORTS = 2**31 - 1  # the statement's limit when every report of the level is mapped
_HEADER_TOKENS = 5  # "--- Report N" before each report in a map prompt


@dataclass
class _Report:
    id: str
    text: str
    tokens: int
    score: float


@register
@dataclass
class CommunityGlobalRetriever(Strategy):
    name = "community_global"
    requires = ("communities",)
    needs_llm = True
    returns_passages = False

    k: int = 5
    """Unused: global search reads community reports, not chunks (kept so `--k` works for every strategy)."""
    level: int = 0
    """Community level whose reports are mapped: 0, the coarsest, has the fewest and broadest reports (corpus-wide
    questions); deeper levels are finer and many more (graphrag's community_level, which defaults to 2)."""
    level_choice: str = "fixed"
    """fixed: map the reports of `level`. leaf_or_top: PankRAG's multi-scale choice (004 l. 108: leaf-level
    summaries for detailed information, higher-level ones for thematic overviews; the paper does not say how it
    chooses): of the top level (0) and the leaf level (the deepest), the one whose `choice_reports` reports
    closest to the question are closer on average. A question about a detail matches one leaf report closely;
    a thematic one matches the broad reports."""
    choice_reports: int = 3
    """Reports per level whose mean cosine to the question decides the leaf_or_top choice."""
    max_reports: int = 0
    """0: every report of the level (graphrag); N: only the N closest to the question by embedding, for
    small local models, where each map call takes seconds."""
    min_rating: float = 0.0
    """Reports rated below this are not mapped (graphrag's min_community_rank)."""
    map_context_tokens: int = 1500
    """Reports per map call, in tokens (graphrag: 8,000 for large models; the local 1.5B has a 4,096 window)."""
    map_max_tokens: int = 400
    """Completion cap of one map call."""
    min_score: int = 1
    """Points scored below this are dropped (a score of 0 always is)."""
    reduce_context_tokens: int = 1500
    """Budget for the key points given to the reduce (answer) step, best first."""
    seed: int = 86
    """Seed of the report shuffle (graphrag's random_state): the same question gets the same batches."""

    def validate(self) -> None:
        self._at_least(0, "k", "level", "max_reports", "min_score")
        self._at_least(1, "map_context_tokens", "map_max_tokens", "reduce_context_tokens", "choice_reports")
        if self.level_choice not in LEVEL_CHOICES:
            raise NeoweaveError(f"community_global: level_choice must be one of {', '.join(LEVEL_CHOICES)}, "
                                f"got {self.level_choice!r}")
        if self.llm is None:
            raise NeoweaveError("community_global needs an LLM gateway for its map step",
                                hint="pass llm=create_gateway(settings); the CLI and `neoweave eval` do this")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        with cost.timed("embed"):
            embedding = self.embedder.embed_query(question)
        with cost.timed("graph"):
            level = self._leaf_or_top(embedding, trace, result) if self.level_choice == "leaf_or_top" \
                else self.level
            rows = self._run(trace, "global_level_reports", {"level": level, "min_rating": self.min_rating,
                                                             "embedding": embedding,
                                                             "limit": self.max_reports or _ALL_REPORTS})
        if rows:  # stale reports (older than their members, or citing a deleted chunk) are withdrawn, not mapped
            trace.skip_reports(self.name, rows[0]["withdrawn"] or [])
            rows = [row for row in rows if row["id"] is not None]
            if not rows:
                result.answer = INSUFFICIENT
                return []
        if not rows:
            raise NeoweaveError(f"community_global: no community report at level {level} (or a shallower "
                                f"community not split further) rated {self.min_rating} or more",
                                hint="run `neoweave enrich communities` (or choose a level `neoweave communities "
                                     "list` shows)")
        reports = [_Report(r["id"], text, (int(r["token_count"]) if r["token_count"] else estimate_tokens(text))
                           + _HEADER_TOKENS, float(r["score"] or 0.0))
                   for r in rows for text in [r["full_report"] or ""]]
        batches = self._batches(reports)
        started = time.perf_counter()
        replies = self._map(question, batches)
        cost.milliseconds["map"] = (time.perf_counter() - started) * 1000
        points: list[KeyPoint] = []
        for batch, reply in zip(batches, replies, strict=True):
            cost.count_calls(reply.calls, reply.ok)
            if not reply.ok:
                log.warning("community_global: a map call gave no usable answer: %s", reply.error)
                continue
            for point in reply.value.points:
                text = " ".join(point.description.split())
                if text and point.score > 0 and point.score >= self.min_score:
                    points.append(KeyPoint(text, point.score, [r.id for r in batch]))
        if replies and all(not reply.ok and not reply.calls for reply in replies):  # an outage is no "nothing found"
            raise NeoweaveError(f"community_global: every map call failed: {replies[0].error}")
        points.sort(key=lambda p: -p.score)  # stable: equal scores keep batch order
        with cost.timed("tokens"):  # as the reduce prompt shows them: "- (score) text"
            counts = self.embedder.count_tokens([f"- ({p.score}) {p.text}" for p in points]) if points else []
        kept, used = [], 0  # best first until one does not fit (graphrag): never a weaker point before a better
        for point, count in zip(points, counts, strict=True):
            point.token_count = count
            if used + count > self.reduce_context_tokens:
                break
            kept.append(point)
            used += count
        if points and not kept:  # the best point alone is over the budget: cut to it rather than answer nothing
            best = points[0]
            best.text = best.text[:max(self.reduce_context_tokens * 3, 1)]
            best.token_count = self.embedder.count_tokens([f"- ({best.score}) {best.text}"])[0]
            kept = [best] if best.token_count <= self.reduce_context_tokens else []
        result.points = kept
        if not kept:
            result.answer = INSUFFICIENT
        for point in kept:
            for community_id in point.community_ids:
                trace.node(community_id)
        return []

    def _leaf_or_top(self, embedding: list[float], trace: Trace, result: RetrievalResult) -> int:
        """The leaf or the top level, whichever's closest reports match the question better (ties: the top);
        `level` when no report has an embedding. The choice and both scores go into the result's parameters as
        `chosen_level`."""
        rows = self._run(trace, "community_level_match", {"embedding": embedding, "min_rating": self.min_rating,
                                                          "m": self.choice_reports})
        means = {int(row["level"]): sum(row["best"]) / len(row["best"]) for row in rows if row["best"]}
        if not means:
            return self.level
        top, leaf = min(means), max(means)
        chosen = leaf if means[leaf] > means[top] else top
        result.parameters["chosen_level"] = {"level": chosen, "top": top, "leaf": leaf,
                                             "top_score": round(means[top], 4), "leaf_score": round(means[leaf], 4)}
        return chosen

    def _batches(self, reports: list[_Report]) -> list[list[_Report]]:
        """Reports shuffled with `seed`, packed into batches within `map_context_tokens` (one report larger than
        that is a batch of its own, cut to fit)."""
        shuffled = sorted(reports, key=lambda r: r.id)
        random.Random(self.seed).shuffle(shuffled)
        batches: list[list[_Report]] = []
        current, used = [], 0
        for report in shuffled:
            if report.tokens > self.map_context_tokens:
                report = _Report(report.id, report.text[:self.map_context_tokens * 4], self.map_context_tokens,
                                 report.score)
            if current and used + report.tokens > self.map_context_tokens:
                batches.append(current)
                current, used = [], 0
            current.append(report)
            used += report.tokens
        if current:
            batches.append(current)
        return batches

    def _map(self, question: str, batches: list[list[_Report]]) -> list[Any]:
        requests = []
        for batch in batches:
            reports = "\n\n".join(f"--- Report {index}\n{report.text.strip()}" for index, report in enumerate(batch, 1))
            requests.append([{"role": "system", "content": MAP_SYSTEM_PROMPT},
                             {"role": "user", "content": f"Reports:\n{reports}\n\nQuestion: {question}"}])
        return structured_each(self.llm, requests, MapAnswer, stage=MAP_STAGE, max_tokens=self.map_max_tokens,
                               mode="prompt")
