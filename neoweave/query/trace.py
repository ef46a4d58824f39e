"""A retrieval's trace: the graph walk behind a result, and what it left out as unservable (links, chunks and
community reports a strategy skips instead of failing or serving stale text) with the command that repairs
it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

LINK_CONTEXT_REPAIR = ("run `neoweave ingest PATH` or `neoweave sync PATH` again (unchanged documents are skipped, "
                       "every missing link context is embedded), or `neoweave enrich kg`")
"""What embeds the link contexts a graph lacks (a graph from before ingest embedded them, an import of one)."""
CHUNK_EMBEDDING_REPAIR = ("run `neoweave ingest PATH` again (an incomplete document is continued; a complete one is "
                          "written again after `neoweave delete PATH`)")
"""What writes a chunk's embedding and text again (an interrupted or foreign write left them out)."""
REPORT_REPAIR = "run `neoweave enrich communities` (it rewrites them)"
"""What rewrites the community reports withdrawn from retrieval (their members or cited chunks changed)."""


@dataclass
class Trace:
    """The graph walk behind a result: what an auditor needs to redraw it."""

    statements: list[str] = field(default_factory=list)
    statement_ms: dict[str, float] = field(default_factory=dict)
    """Milliseconds in each named statement (summed over its calls, round trip included): where the graph
    time of a retrieval went."""
    nodes: list[str] = field(default_factory=list)
    relationships: list[tuple[str, str, str]] = field(default_factory=list)  # (source id, type, target id)
    seeds: dict[str, float] = field(default_factory=dict)
    """Where a graph walk started: node id -> its share of the restart weight (ppr)."""
    scores: dict[str, float] = field(default_factory=dict)
    """What a graph walk found: node id -> its score (ppr: PageRank mass of the top nodes)."""
    skipped_links: list[tuple[str, str]] = field(default_factory=list)
    """Links left out because they have no context embedding to rank them by: (source section, target section)."""
    skipped_chunks: list[str] = field(default_factory=list)
    """Chunks left out because they have no embedding (or no text) to rank and show them by."""
    skipped_reports: list[str] = field(default_factory=list)
    """Community reports withdrawn because they are older than their members or cite a deleted chunk."""
    notes: list[str] = field(default_factory=list)
    """What the retrieval left out and why, with the command that repairs it (shown beside the result)."""

    def skip_links(self, who: str, links: Iterable[tuple[str, str]]) -> None:
        """Record links `who` left out for want of a context embedding; one note says how many and what repairs
        them."""
        _add_new(self.skipped_links, links)
        if self.skipped_links:
            source, target = self.skipped_links[0]
            self._note(who, "link(s) without a context embedding", len(self.skipped_links), f"{source} -> {target}",
                       LINK_CONTEXT_REPAIR)

    def skip_chunks(self, who: str, chunk_ids: Iterable[str]) -> None:
        """Record chunks `who` left out for want of an embedding or text; one note says how many and what
        repairs them."""
        _add_new(self.skipped_chunks, chunk_ids)
        if self.skipped_chunks:
            self._note(who, "chunk(s) without an embedding or text", len(self.skipped_chunks),
                       self.skipped_chunks[0], CHUNK_EMBEDDING_REPAIR)

    def skip_reports(self, who: str, community_ids: Iterable[str]) -> None:
        """Record community reports `who` withdrew as stale; one note says how many and what rewrites them."""
        _add_new(self.skipped_reports, community_ids)
        if self.skipped_reports:
            self._note(who, "community report(s) older than their members or sources", len(self.skipped_reports),
                       self.skipped_reports[0], REPORT_REPAIR)

    def _note(self, who: str, what: str, count: int, example: str, repair: str) -> None:
        """One note per strategy and kind of skipped item, replaced as the count grows."""
        prefix, kind = f"{who}: skipped ", f" {what} (e.g. "
        note = f"{prefix}{count}{kind}{example}); {repair}"
        self.notes = [n for n in self.notes if not (n.startswith(prefix) and kind in n)] + [note]

    def add_statement_ms(self, name: str, ms: float) -> None:
        self.statement_ms[name] = self.statement_ms.get(name, 0.0) + ms

    def chunk(self, section_id: str, chunk_id: str) -> None:
        """A chunk reached through its section."""
        self.node(section_id)
        self.node(chunk_id)
        self.relationship(section_id, "HAS_CHUNK", chunk_id)

    def node(self, node_id: str) -> None:
        if node_id not in self.nodes:
            self.nodes.append(node_id)

    def relationship(self, source: str, rel_type: str, target: str) -> None:
        edge = (source, rel_type, target)
        if edge not in self.relationships:
            self.relationships.append(edge)


def _add_new(kept: list[Any], items: Iterable[Any]) -> None:
    for item in items:
        if item not in kept:
            kept.append(item)


def servable_chunks(rows: Iterable[dict[str, Any]], trace: Trace, who: str, score: str = "score"
                    ) -> list[dict[str, Any]]:
    """Chunk rows a strategy can rank and show: a chunk without an embedding (its `score` against the question is
    null) or without text is left out and noted in the trace, never an error."""
    kept, skipped = [], []
    for row in rows:
        (skipped if row.get(score) is None or row.get("text") is None else kept).append(row)
    trace.skip_chunks(who, [row["chunk_id"] for row in skipped])
    return kept
