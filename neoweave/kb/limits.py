"""What one request may ask of a knowledge base: one set of bounds shared by every front end.

The CLI, the HTTP API and the MCP server all pass their requests through `Limits`, so a question the server
refuses is refused by the command line with the same words. The Python API and evaluations may raise them
(`neoweave.open(limits=Limits.unbounded())`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from neoweave.errors import NeoweaveError


@dataclass(frozen=True)
class Limits:
    """Bounds on a retrieval request; the defaults suit a single-machine graph shared by a team."""

    max_question_chars: int = 2000
    """Longest question accepted, in characters."""
    max_k: int = 50
    """Largest k (seed / top-k chunks)."""
    max_parameter: int = 1000
    """Any other integer parameter (depth, n_links, entities, ...) is bounded by this, in absolute value."""
    max_rows: int = 1000
    """Most rows a server returns for one typed Cypher query (the MCP `cypher` tool); the rest are left out."""

    @classmethod
    def unbounded(cls) -> Limits:
        """No practical bound: for evaluations and trusted scripts."""
        big = 10**9
        return cls(max_question_chars=big, max_k=big, max_parameter=big, max_rows=big)

    def __post_init__(self) -> None:
        for name in ("max_question_chars", "max_k", "max_parameter", "max_rows"):
            if getattr(self, name) < 1:
                raise NeoweaveError(f"limit {name} must be at least 1, not {getattr(self, name)}")

    def question(self, question: Any) -> str:
        """The question without NUL characters and outer blanks; an error when it is empty or too long."""
        if not isinstance(question, str):
            raise NeoweaveError(f"the question must be text, not {type(question).__name__}")
        question = question.replace("\x00", " ").strip()
        if not question:
            raise NeoweaveError("the question is empty", hint='ask something, e.g. neoweave query "How do I ...?"')
        if len(question) > self.max_question_chars:
            raise NeoweaveError(f"the question has {len(question)} characters; at most {self.max_question_chars} "
                                "are accepted")
        return question

    def k(self, k: int) -> int:
        if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= self.max_k:
            raise NeoweaveError(f"k must be between 1 and {self.max_k}, not {k}")
        return k

    def parameter(self, name: str, value: Any) -> Any:
        """An integer parameter within bounds (k by `max_k`); other values unchanged."""
        if name == "k":
            return self.k(value)
        if isinstance(value, int) and not isinstance(value, bool) and abs(value) > self.max_parameter:
            raise NeoweaveError(f"parameter '{name}' must be at most {self.max_parameter} in absolute value, "
                                f"not {value}")
        return value
