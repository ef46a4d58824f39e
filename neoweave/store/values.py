"""What a graph store returns and the small helpers around it: search hits, counts, write spans, batching,
the write-clause test of `neoweave cypher`. Kept apart from `GraphStore` so callers import values, not the store."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

META_ID = "meta"
VECTOR_PROPERTIES = frozenset({"embedding", "context_embedding", "path_embedding"})
# Clauses and procedures that change the graph; `neoweave cypher` refuses them unless --write.
_WRITE_WORDS = re.compile(
    r"\b(CREATE|MERGE|SET|DELETE|DETACH|REMOVE|DROP|FOREACH|LOAD\s+CSV|ALTER|RENAME|GRANT|DENY|REVOKE)\b"
    r"|\bCALL\s+(db\.(create|idx\.\w+\.(create|drop))|apoc\.|gds\.|dbms\.)",
    re.IGNORECASE,
)
_STRINGS_AND_COMMENTS = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*|/\*.*?\*/|`[^`]*`", re.S)


def looks_like_write(cypher: str) -> bool:
    """Whether a query contains a write clause or a write procedure (outside strings and comments)."""
    return bool(_WRITE_WORDS.search(_STRINGS_AND_COMMENTS.sub(" ", cypher)))


_UNSPLIT_SPACE = re.compile(r"[^\S \t]")


def search_text(text: str) -> str | None:
    """A chunk's text for its full-text index, every whitespace character but space and tab made a space; None
    when that changes nothing. FalkorDB's full-text tokenizer splits words at spaces and tabs only, so in
    "alpha\nbeta gamma" it finds "gamma" and neither of the words around the line break."""
    folded = _UNSPLIT_SPACE.sub(" ", text)
    return folded if folded != text else None


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class WriteSpan:
    """What one write span (`GraphStore.writing`) did to the graph's stamp, known once it has ended."""

    before: str | None = None
    """The stamp its first write replaced (None: it wrote nothing, or the graph had none)."""
    first: str | None = None
    """The stamp it set before its first write."""
    after: str | None = None
    """The stamp it set after its last write."""
    others: bool = False
    """The stamp was not its own when it ended: another writer's span began or ended meanwhile."""
    ended: list[Callable[[WriteSpan], None]] = field(default_factory=list)
    """Called with the span once the outermost span has ended and set its last stamp (what a record of the
    graph's state must name: an inner span's writer cannot know it)."""

    @property
    def alone(self) -> bool:
        """It wrote, on a stamped graph, and no other writer's span began or ended while it ran: the graph at
        `after` is the graph at `before` plus this span's writes (a write made outside neoweave is not seen;
        one whose span covers all of this one ends with a stamp of its own)."""
        return self.alone_between() is not None

    def alone_between(self) -> tuple[str, str] | None:
        """(before, after) when the span ran `alone`, else None."""
        if self.before is None or self.first is None or self.after is None or self.others:
            return None
        return self.before, self.after


@dataclass(frozen=True)
class Hit:
    """One search hit: the node's key, a score, and its properties (vectors left out)."""

    id: str
    score: float
    labels: tuple[str, ...] = ()
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Counts:
    nodes: dict[str, int]
    relationships: dict[str, int]


def strip_vectors(properties: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in properties.items() if k not in VECTOR_PROPERTIES}


def batched(rows: Iterable[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def fulltext_terms(text: str) -> list[str]:
    """Plain word terms of a user query: full-text syntax characters never reach the index."""
    return re.findall(r"\w+", text)
