"""Two ways of weighing ppr's MENTIONS edges, tried for retrieval II (issue 44) and not adopted: a variant
strategy `ppr_edges` (ppr with two more parameters) evaluated at k = 2, 5, 10 on a built graph.

    .venv/bin/python benchmarks/ppr_edge_weights.py --data-dir DIR --qa QA.jsonl [--types with-links] \
        --variants '{"off": {}, "idf 0.5": {"idf_beta": 0.5}, "bridge 3": {"bridge_weight": 3.0}}'

- `idf_beta`: a MENTIONS edge weighs 1 / mentions ** idf_beta of its entity, so a chunk hands more of its mass
  to the rare entities it names and an entity more of its own to its home page (an inverse frequency on the
  walk's transitions, not only on the seeds).
- `bridge_weight`: LinearRAG's semantic bridging done lexically: a MENTIONS edge is multiplied by 1 +
  bridge_weight * (share of the question's content words, less the entity's own name, that the mention's
  sentence holds), so the walk leaves a seed page towards the entity named in the sentence that matches the
  question ("The soundtrack ... was produced by Trent Reznor"). `bridge_form=exp` multiplies by
  exp(bridge_weight * share) instead. Reads each new edge's sentence from the store (one statement a hop).

Results in docs/strategies/ppr.md ("What did not become a default").
"""

from __future__ import annotations

import logging
import math
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from strategy_variants import evaluate_variants, variant_arguments  # noqa: E402

from neoweave.nlp.names import STOPWORDS  # noqa: E402
from neoweave.query.base import register  # noqa: E402
from neoweave.query.ppr import PPRRetriever  # noqa: E402

WORD = re.compile(r"[a-z0-9]+")
SENTENCES = """UNWIND $pairs AS pair
MATCH (c:Chunk {id: pair[0]})-[m:MENTIONS]->(e:Entity {id: pair[1]})
RETURN c.id AS chunk_id, e.id AS entity_id, e.name AS name,
       coalesce(m.description, substring(CASE WHEN m.description_start IS NULL THEN null ELSE c.text END,
                coalesce(m.description_start, 0), coalesce(m.description_end - m.description_start, 0))) AS sentence"""


def content_words(text: str | None) -> set[str]:
    return {w for w in WORD.findall((text or "").lower()) if w not in STOPWORDS and len(w) > 2}


@register
@dataclass
class EdgeWeightedPPR(PPRRetriever):
    """ppr with its MENTIONS edges reweighted (see the module docstring); both off by default."""

    name = "ppr_edges"
    idf_beta: float = 0.0
    bridge_weight: float = 0.0
    bridge_form: str = "linear"

    def _retrieve(self, question, trace, cost, result):
        self._question_words = content_words(question)
        self._bridged: set[tuple[str, str, str]] = set()
        return super()._retrieve(question, trace, cost, result)

    def _expand(self, frontier, graph, embedding, trace, index):
        super()._expand(frontier, graph, embedding, trace, index)
        if self.bridge_weight and self._question_words:
            self._bridge(graph)

    def _bridge(self, graph) -> None:
        todo = []
        for key in graph.edges:
            start, rel_type, end = key
            if rel_type == "MENTIONS" and key not in self._bridged:
                todo.append((key, *((start, end) if graph.labels[start] == "Chunk" else (end, start))))
        if not todo:
            return
        rows = self.store.query(SENTENCES, {"pairs": [[chunk, entity] for _, chunk, entity in todo]})
        found = {(row["chunk_id"], row["entity_id"]): row for row in rows}
        for key, chunk, entity in todo:
            self._bridged.add(key)
            row = found.get((chunk, entity))
            asked = self._question_words - content_words(row["name"]) if row and row["sentence"] else set()
            if asked:
                share = len(asked & content_words(row["sentence"])) / len(asked)
                graph.edges[key] *= (math.exp(self.bridge_weight * share) if self.bridge_form == "exp"
                                     else 1 + self.bridge_weight * share)

    def _walk(self, graph, seeds, trace):
        if not self.idf_beta:
            return super()._walk(graph, seeds, trace)
        kept = dict(graph.edges)
        for key in kept:
            start, rel_type, end = key
            if rel_type == "MENTIONS":
                entity = end if graph.labels[end] == "Entity" else start
                graph.edges[key] = kept[key] / max(1.0, graph.mentions.get(entity, 1.0)) ** self.idf_beta
        try:
            return super()._walk(graph, seeds, trace)
        finally:
            graph.edges.clear()
            graph.edges.update(kept)


def main() -> None:
    args = variant_arguments(__doc__.splitlines()[0], '{"off": {}, "idf 0.5": {"idf_beta": 0.5}, '
                                              '"bridge 3": {"bridge_weight": 3.0}}').parse_args()
    logging.basicConfig(level=logging.WARNING)
    evaluate_variants("ppr_edges", args)


if __name__ == "__main__":
    main()
