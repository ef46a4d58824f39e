"""Precision and recall of entity resolution against mentions annotated by hand.

Gold: groups of `doc_id:surface` mentions that name one thing. Each annotated mention is looked up in the
graph (the entity its document's chunks point to with that surface form, after merges); pairs of mentions
are then scored: same group and same entity = a correct merge, different groups and same entity = a false
merge. Mentions the extractor never produced are counted as missing, not as errors of resolution.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field
from pathlib import Path

from neoweave.store.base import GraphStore


@dataclass
class ResolutionScore:
    precision: float
    recall: float
    correct_pairs: int
    false_pairs: int
    gold_pairs: int
    found: int
    missing: list[str] = field(default_factory=list)
    false_merges: list[tuple[str, str]] = field(default_factory=list)
    missed_merges: list[tuple[str, str]] = field(default_factory=list)


def score_resolution(store: GraphStore, gold_path: Path) -> ResolutionScore:
    clusters: list[list[str]] = json.loads(gold_path.read_text(encoding="utf-8"))["clusters"]
    cluster_of = {mention: index for index, group in enumerate(clusters) for mention in group}
    # one MENTIONS edge per chunk and entity, its surface forms as parallel lists (an older graph's edge: one form)
    rows = store.query("MATCH (c:Chunk)-[m:MENTIONS]->(e:Entity) "
                       "RETURN c.doc_id AS doc, coalesce(m.names, [m.name]) AS names, e.id AS entity, "
                       "coalesce(m.counts, [m.count]) AS counts")
    entity_of: dict[str, tuple[int, str]] = {}
    for row in rows:
        for name, count in zip(row["names"], row["counts"], strict=True):
            mention = f"{row['doc']}:{name}"
            if mention in cluster_of and int(count or 1) > entity_of.get(mention, (0, ""))[0]:
                entity_of[mention] = (int(count or 1), row["entity"])
    found = [m for m in cluster_of if m in entity_of]
    correct = false = gold = 0
    false_merges, missed = [], []
    for a, b in itertools.combinations(sorted(found), 2):
        same_gold = cluster_of[a] == cluster_of[b]
        same_entity = entity_of[a][1] == entity_of[b][1]
        gold += same_gold
        if same_entity and same_gold:
            correct += 1
        elif same_entity:
            false += 1
            false_merges.append((a, b))
        elif same_gold:
            missed.append((a, b))
    return ResolutionScore(precision=correct / (correct + false) if correct + false else 1.0,
                           recall=correct / gold if gold else 1.0, correct_pairs=correct, false_pairs=false,
                           gold_pairs=gold, found=len(found), missing=sorted(set(cluster_of) - set(found)),
                           false_merges=false_merges, missed_merges=missed)
