"""LinearRAG's semantic bridging on ppr's seeds, with sentence vectors (retrieval II, issue 44): a variant
strategy `ppr_bridge` evaluated at k = 2, 5, 10 on a built graph.

    .venv/bin/python benchmarks/ppr_sentence_bridge.py --data-dir DIR --qa QA.jsonl [--types with-links] \
        --out OUT --variants '{"off": {}, "bridge": {"bridge_rounds": 1}}'

LinearRAG (Zhuang et al. 2025, DEEP-PolyU/LinearRAG `calculate_entity_scores`) activates entities through
sentences: from each activated entity it takes its `top_k_sentence` (1) not yet used sentences most similar to
the question and activates every entity those sentences name with score = entity score * sentence cosine,
dropping those under `iteration_threshold` (0.5), for `max_iterations` - 1 (2) rounds; the activated entities
weigh in the PageRank's restart vector. Here the sentences are those ppr's index already records: a mention's
sentence (`MENTIONS.description_start/end` in its chunk's text); their vectors are made once per graph by this
script (what an `enrich` step would store: the tokens are about those of the chunks) and cached in OUT.
Bridged entities join the first expansion and the restart vector with weight `bridge_weight` * score, divided
by their mentions like every entity seed; generic seeds (concepts, dates, common nouns, lowercase matches) do
not bridge.

Results in docs/strategies/ppr.md.
"""

from __future__ import annotations

import json
import logging
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from strategy_variants import evaluate_variants, variant_arguments  # noqa: E402

from neoweave.query.base import register  # noqa: E402
from neoweave.query.ppr import GENERIC_TYPES, PPRRetriever  # noqa: E402

log = logging.getLogger("ppr_sentence_bridge")
MENTION_SENTENCES = """MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity)
WHERE c.id > $after AND m.description_start IS NOT NULL
WITH c, m, e ORDER BY c.id LIMIT 50000
RETURN c.id AS chunk_id, e.id AS entity_id, m.description_start AS start, m.description_end AS end"""
CHUNK_TEXTS = "MATCH (c:Chunk) WHERE c.id IN $ids RETURN c.id AS chunk_id, c.text AS text"


class SentenceTable:
    """Mention sentences of a graph: their unit vectors, the entities each names, the sentences of each entity."""

    def __init__(self, vectors: np.ndarray, entities_of: list[list[str]], chunk_of: list[str]):
        self.vectors, self.entities_of, self.chunk_of = vectors, entities_of, chunk_of
        self.sentences_of = _invert(entities_of)
        self.sentence_of = {(chunk, entity): sentence for sentence, chunk in enumerate(chunk_of)
                            for entity in entities_of[sentence]}

    @classmethod
    def build(cls, store, embedder, cache: Path) -> SentenceTable:
        if cache.exists():
            saved = np.load(cache, allow_pickle=True)
            return cls(saved["vectors"], json.loads(str(saved["entities_of"])), json.loads(str(saved["chunk_of"])))
        started = time.perf_counter()
        spans: dict[tuple[str, int, int], list[str]] = defaultdict(list)
        after = ""
        while True:  # paged by chunk id (a page ends inside a chunk: the last chunk is read again)
            rows = store.query(MENTION_SENTENCES, {"after": after})
            for row in rows:
                spans[(row["chunk_id"], int(row["start"]), int(row["end"]))].append(row["entity_id"])
            if len(rows) < 50000:
                break
            last = rows[-1]["chunk_id"]
            after = max((r["chunk_id"] for r in rows if r["chunk_id"] < last), default=after)
        chunk_ids = sorted({chunk for chunk, _, _ in spans})
        texts: dict[str, str] = {}
        for at in range(0, len(chunk_ids), 2000):
            texts.update({r["chunk_id"]: r["text"] for r in store.query(CHUNK_TEXTS, {"ids": chunk_ids[at:at + 2000]})})
        keys = sorted(spans)
        sentences = [texts.get(chunk, "")[start:end] for chunk, start, end in keys]
        entities_of = [sorted(set(spans[key])) for key in keys]
        log.info("%d mention sentences in %d chunks; embedding", len(keys), len(chunk_ids))
        vectors = np.asarray(embedder.embed(sentences), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        tokens = sum(embedder.count_tokens(sentences))
        chunk_of = [chunk for chunk, _, _ in keys]
        np.savez(cache, vectors=vectors, entities_of=json.dumps(entities_of), chunk_of=json.dumps(chunk_of))
        log.info("sentence table: %d sentences, %d tokens, %.1f s", len(keys), tokens, time.perf_counter() - started)
        (cache.parent / "sentence_table.json").write_text(json.dumps(
            {"sentences": len(keys), "chunks": len(chunk_ids), "tokens": tokens,
             "seconds": round(time.perf_counter() - started, 1)}))
        return cls(vectors, entities_of, chunk_of)


def _invert(entities_of: list[list[str]]) -> dict[str, list[int]]:
    sentences_of: dict[str, list[int]] = defaultdict(list)
    for sentence, entities in enumerate(entities_of):
        for entity in entities:
            sentences_of[entity].append(sentence)
    return dict(sentences_of)


TABLES: dict[str, SentenceTable] = {}
CACHE_DIR: list[Path] = []


@register
@dataclass
class SentenceBridgedPPR(PPRRetriever):
    """ppr whose seeds are widened by LinearRAG's semantic bridging (see the module docstring); off by default."""

    name = "ppr_bridge"
    bridge_rounds: int = 0
    bridge_top: int = 1
    bridge_threshold: float = 0.0
    bridge_weight: float = 1.0
    sentence_beta: float = 0.0
    """MENTIONS edges times exp(sentence_beta * cosine(question, the mention's sentence)): a chunk hands its mass
    to the entities of its sentences that match the question, an entity to the chunks where its sentence does."""

    def _table(self) -> SentenceTable:
        key = self.store.graph_name if hasattr(self.store, "graph_name") else "graph"
        if key not in TABLES:
            TABLES[key] = SentenceTable.build(self.store, self.embedder, CACHE_DIR[0] / f"sentences-{key}.npz")
        return TABLES[key]

    def _fetch_subgraph(self, graph, sources, embedding, trace, cost, index=None):
        self._bridged: dict[str, float] = {}
        self._query = np.asarray(embedding, dtype=np.float32)
        if self.bridge_rounds:
            with cost.timed("bridge"):
                self._bridged = self._bridge(sources, np.asarray(embedding, dtype=np.float32))
            for entity in self._bridged:
                if entity not in graph.labels:
                    graph.add_node(entity, "Entity")
        return super()._fetch_subgraph(graph, sources, embedding, trace, cost, index)

    def _bridge(self, sources, query: np.ndarray) -> dict[str, float]:
        table = self._table()
        active = {entity: score for entity, score in sources.linked.items()
                  if score > self.generic_weight and entity not in sources.common
                  and entity.split(":", 1)[0] not in GENERIC_TYPES}
        bridged: dict[str, float] = {}
        used: set[int] = set()
        for _ in range(self.bridge_rounds):
            found: dict[str, float] = {}
            for entity, score in active.items():
                candidates = [s for s in table.sentences_of.get(entity, ()) if s not in used]
                if not candidates:
                    continue
                similarity = table.vectors[candidates] @ query
                for at in np.argsort(-similarity)[:self.bridge_top]:
                    sentence = candidates[int(at)]
                    used.add(sentence)
                    for other in table.entities_of[sentence]:
                        value = score * float(similarity[at])
                        if other in sources.linked or value < self.bridge_threshold:
                            continue
                        if other.split(":", 1)[0] in GENERIC_TYPES:
                            continue
                        found[other] = found.get(other, 0.0) + value
            for entity, value in found.items():
                bridged[entity] = bridged.get(entity, 0.0) + value
            active = found
        return bridged

    def _walk(self, graph, seeds, trace):
        if not self.sentence_beta:
            return super()._walk(graph, seeds, trace)
        table = self._table()
        kept = dict(graph.edges)
        pairs, keys = [], []
        for key in kept:
            start, rel_type, end = key
            if rel_type == "MENTIONS":
                chunk, entity = (start, end) if graph.labels[start] == "Chunk" else (end, start)
                sentence = table.sentence_of.get((chunk, entity))
                if sentence is not None:
                    pairs.append(sentence)
                    keys.append(key)
        if pairs:
            factors = np.exp(self.sentence_beta * (table.vectors[pairs] @ self._query))
            factors /= factors.mean()  # the kind's total weight stays: homes and links keep their share
            for key, factor in zip(keys, factors, strict=True):
                graph.edges[key] = kept[key] * float(factor)
        try:
            return super()._walk(graph, seeds, trace)
        finally:
            graph.edges.clear()
            graph.edges.update(kept)

    def _seeds(self, sources, graph):
        seeds = super()._seeds(sources, graph)
        for entity, value in getattr(self, "_bridged", {}).items():
            mentions = max(1.0, graph.mentions.get(entity, 1.0))
            seeds[entity] = seeds.get(entity, 0.0) + self.bridge_weight * value / mentions ** self.mention_exponent
        return seeds


def main() -> None:
    args = variant_arguments(__doc__.splitlines()[0], '{"off": {}, "bridge 1": {"bridge_rounds": 1}}').parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args.out.mkdir(parents=True, exist_ok=True)
    CACHE_DIR.append(args.out)  # the sentence vectors are cached beside the reports
    evaluate_variants("ppr_bridge", args)


if __name__ == "__main__":
    main()
