"""Naive vector RAG: the top-k chunks by cosine similarity to the question."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register


@register
@dataclass
class NaiveRAG(Strategy):
    name = "naive"
    paper: ClassVar[dict[str, Any] | None] = {"k": 10}
    paper_source: ClassVar[str] = "thesis, 001 l. 725-731 (top 10 chunks; LARAG's baseline, 000 l. 222: 5 or 10)"

    k: int = 5
    """Chunks retrieved (LARAG's baseline uses 5; the thesis used 10)."""

    def validate(self) -> None:
        self._at_least(1, "k")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        return self._seed(question, self.k, trace, cost)[1]
