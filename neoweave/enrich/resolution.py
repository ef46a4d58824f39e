"""Entity resolution: merge entities that name the same thing, each merge recorded and undoable.

Rules, in order (the first that applies decides; a pair once unmerged by a user is never merged again):
- `same-name`: equal keys in compatible type groups ("Demon Dice" tagged ORG and WORK_OF_ART);
- `honorific`: a leading title word dropped ("King Lothair II" -> "Lothair II");
- `acronym`: an acronym that is the initials of exactly one compatible multi-word name ("IBM");
- `partial-name`: a one-word person name that is the last name of exactly one full person name sharing a
  document with it ("Derrickson" -> "Scott Derrickson"; the full name's documents are those of every entity of
  that name, whichever group tagged it);
- `embedding`: names of one type group sharing a word, whose entity embeddings (`kg.entity_text`) have cosine
  at least the threshold, and that do not differ in a number ("Lothair I" and "Lothair II", "Python 3.3" and
  "Python 3.2.3", "Heinkel HD 23" and "Heinkel HD 26" never merge).
Which merges hold is derived from the current mentions (`resolution_derived`): clusters of the rules' pairs,
the survivor by a canonical rule, re-made on every kg run, so that the merges do not depend on the order documents
arrived in. A merge moves the absorbed entity's MENTIONS onto the survivor's (one edge per chunk and entity: a
chunk mentioning both keeps one edge, the absorbed forms appended to its lists with their origin ids) and its
relations; the survivor keeps the other's names as aliases. `EntityMerge` nodes record rule, score, surface forms
and the entity that joined it (`via`); `unmerge` restores the absorbed entity and moves back the list entries
of its origins.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from neoweave.enrich.kg_writes import fold_mentions
from neoweave.errors import NeoweaveError
from neoweave.nlp.names import STOPWORDS, acronym, compatible, without_honorific
from neoweave.store.base import GraphStore
from neoweave.store.values import now_iso

_NUMBER = re.compile(r"^(?:\d+|[ivxlcdm]+)$")
_NUMBERED = re.compile(r"\d")
log = logging.getLogger(__name__)
NO_EMBEDDING_GROUPS = frozenset({"date", "concept", "code"})


@dataclass(slots=True)
class Candidate:
    id: str
    key: str
    name: str
    group: str
    aliases: list[str]
    mentions: int


@dataclass(slots=True)
class Proposal:
    survivor: str
    absorbed: str
    rule: str
    score: float


def _numbers(key: str) -> set[str]:
    """The words of a name that number it: digits anywhere ("3.2.3", "mp3", "1990s") or a Roman numeral."""
    return {word for word in key.split(" ") if _NUMBERED.search(word) or _NUMBER.match(word)}


def final_survivors(store: GraphStore, ids: list[str]) -> dict[str, str]:
    """absorbed id -> the entity it now lives in (following chains of merges)."""
    redirects: dict[str, str] = {}
    frontier = list(ids)
    for _ in range(20):  # chains are short; bounded anyway
        if not frontier:
            break
        rows = store.run("entity_redirects", {"ids": frontier})
        step = {r["absorbed_id"]: r["survivor_id"] for r in rows}
        redirects.update(step)
        frontier = [s for s in step.values() if s not in redirects]
    resolved = {}
    for absorbed in redirects:
        target, seen = absorbed, set()
        while target in redirects and target not in seen:
            seen.add(target)
            target = redirects[target]
        resolved[absorbed] = target
    return resolved


def propose(candidates: list[Candidate], *, documents: dict[str, set[str]] | None = None,
            embeddings: dict[str, np.ndarray] | None = None, embedding_threshold: float = 0.93,
            blocks: set[tuple[str, str]] | None = None) -> list[Proposal]:
    """Merge proposals by the rules above (pure: no graph access, so it is tested on its own); `blocks` limits
    the embedding rule to those (group, word) blocks (None: all)."""
    by_key: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        by_key[c.key].append(c)
    rank = {c.id: (c.mentions, -len(c.key), c.id) for c in candidates}
    proposals: list[Proposal] = []

    def best(options: list[Candidate]) -> Candidate:
        return max(options, key=lambda c: rank[c.id])

    for group in by_key.values():
        if len(group) > 1:
            ordered = sorted(group, key=lambda c: rank[c.id], reverse=True)
            for other in ordered[1:]:
                fits = [s for s in ordered if s is not other and compatible(s.group, other.group)
                        and rank[s.id] > rank[other.id]]
                if fits:
                    proposals.append(Proposal(best(fits).id, other.id, "same-name", 1.0))
    for c in candidates:
        stripped = without_honorific(c.key)
        if stripped:
            fits = [s for s in by_key.get(stripped, []) if compatible(s.group, c.group)]
            if fits:
                proposals.append(Proposal(best(fits).id, c.id, "honorific", 1.0))
    initials: dict[str, list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.group in ("organization", "work", "location", "event") and (short := acronym(c.key)):
            initials[short].append(c)
    for c in candidates:
        if " " not in c.key and 2 <= len(c.key) <= 6 and c.name.isupper() and c.key in initials:
            fits = [s for s in initials[c.key] if compatible(s.group, c.group) and s.id != c.id]
            if len({s.key for s in fits}) == 1:  # one name (its entities of several groups are one by same-name)
                proposals.append(Proposal(best(fits).id, c.id, "acronym", 1.0))
    if documents is not None:
        by_last: dict[str, list[Candidate]] = defaultdict(list)
        named_in: dict[str, set[str]] = defaultdict(set)  # a full name's documents, whatever group tagged it
        for c in candidates:
            named_in[c.key] |= documents.get(c.id, set())
        for c in candidates:
            words = c.key.split(" ")
            if c.group == "person" and len(words) >= 2:
                by_last[words[-1]].append(c)
        for c in candidates:
            if c.group != "person" or " " in c.key or len(c.key) < 4 or c.key in STOPWORDS:
                continue
            mine = documents.get(c.id, set())
            fits = [f for f in by_last.get(c.key, []) if mine & named_in.get(f.key, set())]
            if len({f.key for f in fits}) == 1:  # 'Obama' beside 'Barack Obama' (not Michelle Obama, named elsewhere)
                shared = mine & named_in[fits[0].key]
                proposals.append(Proposal(best(fits).id, c.id, "partial-name", round(len(shared) / len(mine), 4)))
    if embeddings:
        proposals += embedding_proposals(candidates, embeddings, embedding_threshold, rank, blocks)
    return proposals


def embedding_proposals(candidates: list[Candidate], embeddings: dict[str, np.ndarray], threshold: float,
                         rank: dict[str, tuple], only: set[tuple[str, str]] | None = None) -> list[Proposal]:
    blocks: dict[tuple[str, str], list[Candidate]] = defaultdict(list)
    for c in candidates:
        if c.group in NO_EMBEDDING_GROUPS or c.id not in embeddings:
            continue
        for word in set(c.key.split(" ")):
            if len(word) > 2 and word not in STOPWORDS and not _NUMBER.match(word) \
                    and (only is None or (c.group, word) in only):
                blocks[(c.group, word)].append(c)
    proposals, seen = [], set()
    for members in blocks.values():
        if len(members) < 2 or len(members) > 200:
            continue  # a word shared by hundreds of names says nothing
        matrix = np.stack([embeddings[m.id] for m in members])
        similarity = matrix @ matrix.T
        for i, j in zip(*np.nonzero(np.triu(similarity, 1) >= threshold), strict=True):
            a, b = members[int(i)], members[int(j)]
            if (a.id, b.id) in seen or _numbers(a.key) != _numbers(b.key):
                continue
            seen.add((a.id, b.id))
            survivor, absorbed = (a, b) if rank[a.id] >= rank[b.id] else (b, a)
            proposals.append(Proposal(survivor.id, absorbed.id, "embedding", round(float(similarity[i, j]), 4)))
    return proposals


def changed_blocks(candidates: list[Candidate], changed: frozenset[str]) -> set[tuple[str, str]]:
    """The embedding rule's (group, word) blocks that hold a changed entity: the only ones whose comparisons can
    decide otherwise than when their members last changed."""
    return {(c.group, word) for c in candidates if c.id in changed for word in set(c.key.split(" "))}


def merge_id(survivor: str, absorbed: str) -> str:
    return "merge:" + hashlib.sha1(f"{absorbed}->{survivor}".encode()).hexdigest()[:16]


def apply_merges(store: GraphStore, merges: list[Proposal], candidates: dict[str, Candidate], *,
                 method: str = "rule", batch: int = 200,
                 records: dict[str, dict[str, Any]] | None = None) -> dict[str, list[str]]:
    """Write merges in units of `batch`: record, move mentions and relations, aliases, delete absorbed. Returns
    the survivors' aliases as written. `records`: absorbed id -> the record row to write (`resolution_derived`'s,
    read from the final state), instead of one made from the absorbed entity's properties."""
    now = now_iso()
    aliases: dict[str, list[str]] = {cid: list(c.aliases) for cid, c in candidates.items()}
    for start in range(0, len(merges), batch):
        part = merges[start:start + batch]
        properties = entity_properties(store, [m.absorbed for m in part])
        rows, finish = [], []
        for m in part:
            absorbed, survivor = candidates[m.absorbed], candidates[m.survivor]
            forms = list(dict.fromkeys([absorbed.name, *aliases.get(m.absorbed, [])]))
            props = dict(properties.get(m.absorbed, {"id": m.absorbed}))
            if props.get("method") != "import":  # derived from mentions (the smallest chunk id's): re-derived on
                props.pop("description", None)  # unmerge, so the record never keeps a deleted chunk's sentence
            rows.append((records or {}).get(m.absorbed) or {
                "id": merge_id(m.survivor, m.absorbed), "survivor_id": m.survivor, "absorbed_id": m.absorbed,
                "absorbed_json": json.dumps(props, ensure_ascii=False), "rule": m.rule, "score": m.score,
                "forms": forms, "method": method, "via": None})
            forms = list(rows[-1]["forms"])
            merged = [a for a in dict.fromkeys([*aliases.get(m.survivor, []), *forms]) if a != survivor.name]
            aliases[m.survivor] = merged
            finish.append({"survivor_id": m.survivor, "absorbed_id": m.absorbed, "aliases": merged})
        pairs = [{"survivor_id": m.survivor, "absorbed_id": m.absorbed} for m in part]
        with store.unit() as unit:
            unit.run("kg_changes_mark_merges", {"rows": pairs})
            unit.run("community_mark_changed_entities",
                     {"entity_ids": sorted({e for m in part for e in (m.survivor, m.absorbed)})})
            unit.run("entity_merge_record", {"rows": rows, "now": now})
            unit.run("entity_merge_mentions", {"rows": pairs})
            unit.run("entity_merge_relations_out", {"rows": pairs})
            unit.run("entity_merge_relations_in", {"rows": pairs})
            unit.run("entity_merge_finish", {"rows": finish})
            unit.run("kg_mark_entity_sections_pending", {"entity_ids": [m.survivor for m in part]})
    return {m.survivor: aliases[m.survivor] for m in merges}


def refresh_aliases(store: GraphStore) -> int:
    """Survivors' aliases: the forms of their active merges (with the aliases an imported entity holds), sorted,
    without the name. A survivor deleted with its last mention and re-created by a later chunk (its merge stays)
    gets them back; a form renamed since its merge leaves its old name; the order does not depend on the order
    merges were made in. Returns the entities written."""
    rows = []
    for row in store.run("entity_alias_sources"):
        held = list(row["aliases"] or [])
        kept = set(held) if row["method"] == "import" else set()
        wanted = sorted(({alias for forms in row["forms"] for alias in forms or []} | kept) - {row["name"]})
        if wanted != held:
            rows.append({"id": row["id"], "aliases": wanted})
    if rows:
        with store.unit() as unit:
            unit.run_batches("entity_set_aliases", rows)
    return len(rows)


def entity_properties(store: GraphStore, ids: list[str]) -> dict[str, dict[str, Any]]:
    """id -> the properties a merge record keeps (one statement for a whole batch)."""
    return {row["id"]: {**row, "aliases": row["aliases"] or []}
            for row in store.run("entity_properties", {"ids": ids})}


def unmerge(store: GraphStore, merge_or_entity: str) -> dict[str, Any]:
    """Undo one merge (by merge id, or by the absorbed entity's id); returns the record and chunks to redo."""
    records = store.run("entity_merges", {"ids": []})
    record = next((r for r in records if r["status"] == "merged" and merge_or_entity in (r["id"], r["absorbed_id"])),
                  None)
    if record is None:
        raise NeoweaveError(f"no active merge {merge_or_entity!r}",
                            hint="list merges with `neoweave entities merges`; pass a merge id or an absorbed id")
    absorbed = json.loads(record["absorbed_json"])
    absorbed.setdefault("aliases", [])
    for name in ("key", "name", "type", "description", "method"):
        absorbed.setdefault(name, None)
    absorbed.setdefault("source", "unmerge")
    absorbed["created_at"] = now_iso()
    origins = {record["absorbed_id"]}
    frontier = [record["absorbed_id"]]
    while frontier:  # what the absorbed entity had itself absorbed goes back with it
        inner = [r["absorbed_id"] for r in records if r["status"] == "merged" and r["survivor_id"] in frontier
                 and r["absorbed_id"] not in origins]
        origins.update(inner)
        frontier = inner
    survivor = entity_properties(store, [record["survivor_id"]]).get(record["survivor_id"], {})
    forms = set(record["forms"] or [])
    survivor_aliases = [a for a in survivor.get("aliases", []) if a not in forms]
    fold_mentions(store)  # a graph built before one MENTIONS per chunk and entity: its edges get lists first
    ids = {"survivor_id": record["survivor_id"], "absorbed_id": record["absorbed_id"]}
    with store.unit() as unit:  # three statements, see entity_unmerge.cypher
        unit.run("kg_changes_mark_merges", {"rows": [{"survivor_id": record["survivor_id"], "absorbed_id": origin}
                                                     for origin in sorted(origins)]})
        unit.run("community_mark_changed_entities", {"entity_ids": [record["survivor_id"]]})
        unit.run("entity_unmerge", {"merge_id": record["id"], "absorbed": absorbed,
                                    "survivor_aliases": survivor_aliases, "now": now_iso()})
        unit.run("entity_unmerge_mentions", {**ids, "origin_ids": sorted(origins)})
        unit.run("entity_unmerge_empty_mentions", {"survivor_id": record["survivor_id"]})
        unit.run("kg_mark_entity_sections_pending", {"entity_ids": [record["absorbed_id"], record["survivor_id"]]})
    store.run("kg_refill_descriptions", write=True)  # the restored entity's, by the rule of kg_describe_entities
    chunk_ids = list(dict.fromkeys(
        r["chunk_id"] for r in store.run("entity_mentions", {"id": record["absorbed_id"], "limit": 1_000_000})))
    return {"record": record, "chunk_ids": chunk_ids, "absorbed": absorbed}
