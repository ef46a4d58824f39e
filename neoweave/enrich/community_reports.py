"""Community reports: what a community is about, as text a search can rank and a prompt can hold.

The fast (LLM-free) report is extractive: the community's central entities (weighted degree inside it), its
strongest relations with the sentences they were read from, and as summary the sentences of its most central
chunks (closest to the centroid of the chunks that mention most members, embeddings already stored) that name
the most members. The llm report (microsoft/graphrag's shape: title, summary, rated findings) is built from the
same context.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from neoweave.enrich.leiden import Community
from neoweave.nlp.sentences import sentences as split_sentences


@dataclass
class MemberEntity:
    id: str
    name: str
    type: str
    description: str = ""
    mentions: int = 0
    degree: float = 0.0
    """Weighted degree inside the community."""


@dataclass
class MemberRelation:
    source_id: str
    target_id: str
    type: str
    description: str
    weight: float
    chunk_ids: list[str]


@dataclass
class SourceChunk:
    id: str
    text: str
    embedding: list[float] | None
    members: int
    """How many member entities the chunk mentions."""


@dataclass
class ReportContext:
    community: Community
    entities: list[MemberEntity]
    relations: list[MemberRelation]
    chunks: list[SourceChunk]


@dataclass
class Finding:
    summary: str
    explanation: str


@dataclass
class Report:
    title: str
    summary: str
    findings: list[Finding] = field(default_factory=list)
    rating: float = 0.0
    rating_explanation: str = ""
    chunk_ids: list[str] = field(default_factory=list)

    def full_report(self, context: ReportContext) -> str:
        """The report as Markdown: what a prompt shows and `neoweave communities show` prints."""
        lines = [f"# {self.title}", "", self.summary, ""]
        if self.rating_explanation:
            lines += [f"Importance {self.rating:.1f}/10: {self.rating_explanation}", ""]
        for finding in self.findings:
            lines += [f"## {finding.summary}", finding.explanation, ""]
        top = sorted(context.entities, key=lambda e: (-e.degree, -e.mentions, e.name))[:10]
        if top:
            lines += ["## Entities", *(f"- {e.name} ({e.type}, {e.mentions} mentions)" for e in top), ""]
        if self.chunk_ids:
            lines += ["Sources: " + ", ".join(self.chunk_ids)]
        return "\n".join(lines).strip() + "\n"

    def findings_json(self) -> str:
        return json.dumps([{"summary": f.summary, "explanation": f.explanation} for f in self.findings],
                          ensure_ascii=False)


MENTIONS_RATED_TEN = 10_000
"""The fast rating is 10 * ln(1 + mentions) / ln(1 + this), capped at 10: a fixed scale, so a report's rating
depends on its own community only (scaled by the level's largest community, every rating moved when one
community grew, and a report kept as unchanged disagreed with one written from scratch)."""
FAST_RATING = f"ln-mentions/{MENTIONS_RATED_TEN}"
"""Names the rating scale in the fast reports' fingerprint: a change of scale rewrites them."""


def fast_rating(mentions: int) -> float:
    return min(10.0, round(10 * math.log1p(max(mentions, 0)) / math.log1p(MENTIONS_RATED_TEN), 1))


def rank_entities(context: ReportContext) -> list[MemberEntity]:
    """Members by weighted degree inside the community, then mentions, then name (deterministic)."""
    degree: dict[str, float] = {}
    for relation in context.relations:
        for end in (relation.source_id, relation.target_id):
            degree[end] = degree.get(end, 0.0) + relation.weight
    for entity in context.entities:
        entity.degree = degree.get(entity.id, 0.0)
    return sorted(context.entities, key=lambda e: (-e.degree, -e.mentions, e.name))


def centroid(chunks: list[SourceChunk]) -> list[float] | None:
    """The normalised mean of the chunks' embeddings: the fast report's vector. It lives in the question space
    already (the chunks' own model) and costs nothing; embedding each report's text took 110 s of the 126 s
    a HotpotQA-100 run spent (1,782 reports, MiniLM on 2 cores)."""
    vectors = [c.embedding for c in chunks if c.embedding]
    if not vectors:
        return None
    mean = np.asarray(vectors, dtype=np.float32).mean(axis=0)
    norm = float(np.linalg.norm(mean))
    return (mean / norm).tolist() if norm else None


def central_chunks(chunks: list[SourceChunk]) -> list[SourceChunk]:
    """Chunks by cosine to the centroid of all the community's chunks (most typical first)."""
    with_vectors = [c for c in chunks if c.embedding]
    if len(with_vectors) < 2:
        return with_vectors + [c for c in chunks if not c.embedding]
    matrix = np.asarray([c.embedding for c in with_vectors], dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12
    centroid = matrix.mean(axis=0)
    scores = matrix @ (centroid / (np.linalg.norm(centroid) + 1e-12))
    # rounded: two chunks are equally central (a pair always is) up to float noise, and the same text embedded in
    # another batch differs in the 7th digit; the tie goes to the smaller id, in every build of the graph
    order = sorted(range(len(with_vectors)), key=lambda i: (-round(float(scores[i]), 5), with_vectors[i].id))
    return [with_vectors[i] for i in order] + [c for c in chunks if not c.embedding]


def sentences(text: str) -> list[str]:
    return split_sentences(" ".join(text.split()))


@dataclass
class FastReporter:
    """Extractive reports, no LLM."""

    summary_sentences: int = 3
    summary_chars: int = 600
    findings: int = 5
    central_chunks: int = 3

    def report(self, context: ReportContext) -> Report:
        entities = rank_entities(context)
        names = {e.id: e.name for e in entities}
        title = _title([e.name for e in entities[:3]])
        central = central_chunks(context.chunks)[:self.central_chunks]
        summary = self._summary(central, [e.name for e in entities])
        findings = []
        seen: set[str] = set()
        for relation in sorted(context.relations, key=lambda r: (-r.weight, r.source_id, r.target_id)):
            text = " ".join((relation.description or "").split())
            if not text or text in seen:
                continue
            seen.add(text)
            source, target = names.get(relation.source_id, relation.source_id), names.get(relation.target_id,
                                                                                           relation.target_id)
            findings.append(Finding(f"{source} - {relation.type.replace('_', ' ')} - {target}", text))
            if len(findings) >= self.findings:
                break
        mentions = sum(e.mentions for e in context.entities)
        return Report(title, summary, findings, fast_rating(mentions),
                      f"{len(context.entities)} entities mentioned {mentions} times",
                      [c.id for c in central] + [c.id for c in context.chunks if c not in central][:5])

    def _summary(self, chunks: list[SourceChunk], names: list[str]) -> str:
        """Sentences of the central chunks that name the most members (first in text order on ties)."""
        lowered = [name.lower() for name in names if len(name) > 2]
        scored = []
        for rank, chunk in enumerate(chunks):
            for position, sentence in enumerate(sentences(chunk.text)):
                hits = sum(1 for name in lowered if name in sentence.lower())
                if hits:
                    scored.append((-hits, rank, position, sentence))
        picked: list[str] = []
        for *_, sentence in sorted(scored):
            if sentence in picked:
                continue
            if picked and sum(map(len, picked)) + len(sentence) > self.summary_chars:
                break
            picked.append(sentence[:self.summary_chars])
            if len(picked) >= self.summary_sentences:
                break
        if not picked and chunks:
            picked = [chunks[0].text[:self.summary_chars].strip()]
        return " ".join(picked)


def _title(names: list[str]) -> str:
    if not names:
        return "Community"
    if len(names) == 1:
        return names[0]
    return ", ".join(names[:-1]) + " and " + names[-1]


def report_row(community: Community, report: Report, fingerprint: str, embedding: list[float] | None,
               full_report: str, token_count: int | None, method: str, source: str) -> dict[str, Any]:
    """`token_count` of the full report (what a prompt shows), counted once here instead of per query;
    `method` is how this report was written (an llm run's fallback reports say fast), `source` the signature
    of what wrote it (step, version, method, model and prompt)."""
    return {"id": community.id, "method": method, "report_source": source, "title": report.title,
            "summary": report.summary,
            "full_report": full_report, "token_count": token_count, "findings_json": report.findings_json(),
            "rating": report.rating, "rank": report.rating, "chunk_ids": report.chunk_ids, "embedding": embedding,
            "report_fingerprint": fingerprint}
