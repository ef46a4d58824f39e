"""Entity resolution as a derived layer: merge decisions re-made from the current mentions on every kg run.

The unit is the origin entity (an *atom*): an extracted form, as it stands alone or as a merge folded it into a
survivor's MENTIONS lists (`origin_ids`), with its name and type by the smallest chunk id, its mention count and
documents. The rules of `resolution.propose` give pairs of atoms; the clusters are the connected components of
those pairs (a pair a user undid never joins), and each cluster's survivor is its atom with the most mentions,
then the shortest key, then the smallest id, among those that are not the variant side of an honorific, acronym or
partial-name pair (the full name survives, its short forms become aliases). All of it is read from the final
state, so the decisions do not depend on the order documents arrived, were changed or deleted in: a graph kept up
to date by increments holds the merges a rebuild makes.

Each run compares the clusters with the merges the graph holds (`EntityMerge`, method `rule`):
- an atom alone that belongs to a cluster is merged into its survivor (the usual case: a new document);
- a record whose fields changed (rule, score, forms, `via`) is rewritten;
- a survivor holding an atom that no longer belongs to it (a merge whose justification is gone, a survivor that the
  rule would no longer choose, a record whose absorbed form has no mention left) is *dissolved*: its records are
  removed and the chunks that mention it are extracted again in the same write unit, which gives back every atom
  on its own with its relations; the next pass merges them as the clusters say.

Only the embedding rule is scoped (`changed`): its comparisons are read for the (group, word) blocks of the atoms
of clusters a write touched; elsewhere the embedding pairs the records hold (`via`) stand, their names and blocks
unchanged. The other rules see every atom (they read no vector).
"""

from __future__ import annotations

import json
import logging
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from neoweave.enrich.base import EnrichReport, StepContext
from neoweave.enrich.resolution import (
    NO_EMBEDDING_GROUPS,
    Candidate,
    Proposal,
    apply_merges,
    changed_blocks,
    embedding_proposals,
    merge_id,
)
from neoweave.enrich.resolution import propose as propose_pairs
from neoweave.enrich.resolution_state import DERIVED_METHOD, State, read_state
from neoweave.nlp.names import STOPWORDS
from neoweave.store.values import now_iso

log = logging.getLogger(__name__)
RULES = ("same-name", "honorific", "acronym", "partial-name", "embedding")
"""Rule priority: the rule a record names is the first that joins its absorbed atom to the cluster."""
VARIANT_RULES = frozenset({"honorific", "acronym", "partial-name"})
"""Rules whose absorbed side is a variant of the other name (a title dropped, initials, a last name): a cluster's
survivor is a name no such rule absorbs when it has one, so "Stephen King" and not "King" names the entity. A name
is a variant in every group that tagged it ("King" as a person and as a title mention)."""
MAX_PASSES = 3


def mention_chunks(store, entity_ids: list[str]) -> list[str]:
    """The chunks mentioning these entities (the ones to extract again when their merges are dissolved)."""
    return sorted({row["chunk_id"] for start in range(0, len(entity_ids), 500)
                   for row in store.run("entity_mention_chunk_ids", {"ids": entity_ids[start:start + 500]})})


@dataclass
class Clusters:
    survivor: dict[str, str]
    """Atom -> its cluster's survivor (itself when alone)."""
    records: dict[str, dict]
    """Desired merge records by id."""


def candidates_of(state: State) -> list[Candidate]:
    return [Candidate(a.id, a.key, a.name, a.group, [], a.mentions) for a in state.atoms.values()]


def derive(state: State, *, embed: Callable[[list[str]], list] | None, stored_embeddings: Callable[[list[str]], dict],
           changed: frozenset[str] | None, threshold: float, unembedded_types: tuple[str, ...]) -> Clusters:
    """The clusters the rules give on the current atoms (see the module docstring)."""
    candidates = candidates_of(state)
    pairs = propose_pairs(candidates, documents=state.documents)
    fresh = {frozenset((p.survivor, p.absorbed)) for p in pairs}
    # the atoms whose clusters a write touched, or whose recorded non-embedding link no longer holds
    held = state.held_by()
    touched_atoms: set[str] = set()
    if changed is None:
        touched_atoms = set(state.atoms)
    else:
        for holder, atoms in held.items():
            if holder in changed or atoms & changed:
                touched_atoms |= atoms
        for record in state.records.values():
            link = frozenset((record["absorbed_id"], record.get("via") or record["survivor_id"]))
            if record["rule"] != "embedding" and link not in fresh:
                touched_atoms |= held.get(record["survivor_id"], set())
    blocks = None if changed is None else changed_blocks(candidates, frozenset(touched_atoms))
    embeddings = _embeddings(state, candidates, blocks, embed, stored_embeddings, unembedded_types)
    rank = {c.id: (c.mentions, -len(c.key), c.id) for c in candidates}
    pairs += embedding_proposals(candidates, embeddings, threshold, rank, blocks)
    if blocks is not None:  # embedding links of untouched blocks stand as recorded
        def words(atom: str) -> set[tuple[str, str]]:
            return {(state.atoms[atom].group, w) for w in state.atoms[atom].key.split(" ")}

        for record in state.records.values():
            a, b = record["absorbed_id"], record.get("via") or record["survivor_id"]
            if record["rule"] == "embedding" and a in state.atoms and b in state.atoms \
                    and (words(a) & words(b)) - blocks:
                pairs.append(Proposal(b, a, "embedding", float(record["score"] or 0.0)))
    return _cluster(state, pairs)


def _embeddings(state: State, candidates: list[Candidate], blocks: set[tuple[str, str]] | None,
                embed: Callable[[list[str]], list] | None, stored: Callable[[list[str]], dict],
                unembedded_types: tuple[str, ...]) -> dict[str, np.ndarray]:
    """Name vectors of the atoms in the blocks compared: stored for entities, computed for merged forms."""
    sizes: dict[tuple[str, str], int] = defaultdict(int)
    words = {c.id: set(c.key.split(" ")) for c in candidates}
    for c in candidates:
        for word in words[c.id]:
            if blocks is None or (c.group, word) in blocks:  # the only blocks compared
                sizes[(c.group, word)] += 1
    wanted = [c.id for c in candidates if c.group not in NO_EMBEDDING_GROUPS
              and any(sizes[(c.group, w)] > 1 and (blocks is None or (c.group, w) in blocks)
                      for w in words[c.id] if len(w) > 2 and w not in STOPWORDS)]
    own = [i for i in wanted if i in state.entities]
    vectors = stored(own)
    folded = sorted(i for i in wanted if i not in state.entities and not (
        state.atoms[i].method == "fast" and state.atoms[i].type in unembedded_types))
    if folded and embed is not None:
        for atom_id, vector in zip(folded, embed([state.atoms[i].name for i in folded]), strict=True):
            vectors[atom_id] = np.asarray(vector, dtype=np.float32)
    return vectors


def _cluster(state: State, pairs: list[Proposal]) -> Clusters:
    """Connected components of the pairs (never joining a pair a user undid), survivors, and one record per
    absorbed atom: the first link (rule priority, score, id) of a breadth-first walk from the survivor."""
    order = {rule: i for i, rule in enumerate(RULES)}
    links: dict[frozenset[str], tuple[int, float, str]] = {}
    for p in pairs:
        if p.survivor == p.absorbed or p.survivor not in state.atoms or p.absorbed not in state.atoms:
            continue
        key = frozenset((p.survivor, p.absorbed))
        value = (order.get(p.rule, len(RULES)), -round(float(p.score), 4), p.rule)
        if key not in links or value < links[key]:
            links[key] = value
    parent: dict[str, str] = {}

    def find(node: str) -> str:
        while node in parent:
            node = parent[node]
        return node

    undone_with: dict[str, set[str]] = defaultdict(set)  # the pairs a user undid, by either member
    for pair in state.undone:
        if len(pair) == 2:
            x, y = pair
            undone_with[x].add(y)
            undone_with[y].add(x)
    members: dict[str, set[str]] = {}
    adjacency: dict[str, list[tuple[tuple[int, float, str], str]]] = defaultdict(list)
    for key, value in sorted(links.items(), key=lambda item: (item[1], sorted(item[0]))):
        a, b = sorted(key)
        ra, rb = find(a), find(b)
        if ra != rb:
            group_a, group_b = members.get(ra, {ra}), members.get(rb, {rb})
            smaller, larger = (group_a, group_b) if len(group_a) <= len(group_b) else (group_b, group_a)
            if any(partner in larger for x in smaller for partner in undone_with.get(x, ())):
                continue
            parent[rb] = ra
            members[ra] = group_a | group_b
            members.pop(rb, None)
        adjacency[a].append((value, b))
        adjacency[b].append((value, a))
    survivor_of: dict[str, str] = {}
    records: dict[str, dict] = {}
    variants = {state.atoms[p.absorbed].key for p in pairs if p.rule in VARIANT_RULES and p.absorbed in state.atoms}
    for group in members.values():
        survivor = min(group, key=lambda i: (state.atoms[i].key in variants, -state.atoms[i].mentions,
                                             len(state.atoms[i].key), i))
        seen, queue = {survivor}, deque([survivor])
        while queue:
            node = queue.popleft()
            for value, other in sorted(adjacency[node], key=lambda item: (item[0], item[1])):
                if other in seen or other not in group:
                    continue
                seen.add(other)
                queue.append(other)
                atom = state.atoms[other]
                absorbed = {"id": atom.id, "key": atom.key, "name": atom.name, "type": atom.type,
                            "method": atom.method, "aliases": []}
                record = {"id": merge_id(survivor, other), "survivor_id": survivor, "absorbed_id": other,
                          "absorbed_json": json.dumps(absorbed, ensure_ascii=False, sort_keys=True),
                          "rule": value[2], "score": -value[1], "forms": [atom.name], "method": DERIVED_METHOD,
                          "via": node}
                records[record["id"]] = record
        for atom_id in group:
            survivor_of[atom_id] = survivor
    return Clusters(survivor_of, records)


FIELDS = ("survivor_id", "absorbed_id", "absorbed_json", "rule", "score", "forms", "via")


def to_dissolve(state: State, clusters: Clusters) -> set[str]:
    """Survivors holding what the clusters do not give them, or records that no longer hold."""
    dissolve = set()
    for holder, atoms in state.held_by().items():
        if atoms == {holder}:  # an entity on its own: merged into its survivor, if it has one, by a plain merge
            continue
        if any(clusters.survivor.get(atom, atom) != holder for atom in atoms):
            dissolve.add(holder)
    for record in state.records.values():
        if record["id"] not in clusters.records and record["survivor_id"] in state.entities:
            dissolve.add(record["survivor_id"])
    return dissolve


def resolve(ctx: StepContext, report: EnrichReport, *, embedding_threshold: float = 0.93,
            changed: frozenset[str] | None = None, unembedded_types: tuple[str, ...] = (),
            redo: Callable[[list[str], set[str], list[str]], frozenset[str] | None] | None = None) -> list[Proposal]:
    """Re-make the merge decisions from the current mentions and bring the graph to them; returns the merges
    written. `redo(chunk_ids, atoms, record_ids)` extracts chunks again without redirecting `atoms`, removing the
    records in the same unit, and returns the entities changed since (the kg step's); without it nothing is
    dissolved (the merges to add and records to rewrite are still written)."""
    store = ctx.store

    read: dict[str, np.ndarray | None] = {}  # stored vectors read in an earlier pass (none: not embedded)

    def stored(ids: list[str]) -> dict[str, np.ndarray]:
        missing = [i for i in ids if i not in read]
        read.update(dict.fromkeys(missing))
        for start in range(0, len(missing), 1000):
            for row in store.run("entity_embeddings", {"ids": missing[start:start + 1000]}):
                read[row["id"]] = np.asarray(row["embedding"], dtype=np.float32)
        return {i: read[i] for i in ids if read[i] is not None}

    vectors_of: dict[str, np.ndarray] = {}  # names of merged forms embedded in an earlier pass of this run

    def embed_names(names: list[str]) -> list[np.ndarray]:
        missing = sorted(set(names) - vectors_of.keys())
        if missing:
            vectors_of.update(zip(missing, ctx.embedder.embed(missing), strict=True))
        return [vectors_of[name] for name in names]

    embed = None if ctx.embedder is None else embed_names
    for number in range(MAX_PASSES):
        state = read_state(store)
        if number == 0:
            report.counters["resolution_read_scoped"] = int(state.read_again is not None)
        clusters = derive(state, embed=embed, stored_embeddings=stored, changed=changed,
                          threshold=embedding_threshold, unembedded_types=unembedded_types)
        gone = sorted(r["id"] for r in state.records.values() if r["survivor_id"] not in state.entities)
        if gone:  # every form of the survivor was deleted: nothing to move back
            with store.unit() as unit:
                unit.run("entity_merge_delete", {"ids": gone})
        dissolve = to_dissolve(state, clusters)
        if not dissolve or redo is None:
            break
        held = state.held_by()
        atoms = {atom for holder in dissolve for atom in held.get(holder, set())}
        records = sorted(r["id"] for r in state.records.values() if r["survivor_id"] in dissolve)
        chunks = mention_chunks(store, sorted(dissolve))
        report.count("merges_dissolved", len(records))
        log.info("resolution: %d merges no longer hold; %d chunks extracted again", len(records), len(chunks))
        more = redo(chunks, atoms, records)
        stale = set(read) if more is None else {i for i, v in read.items() if v is None} | more | frozenset(atoms)
        for entity_id in stale:  # written again since, or embedded since
            read.pop(entity_id, None)
        changed = None if changed is None or more is None else changed | more | frozenset(atoms)
    else:
        log.warning("entity resolution still dissolving after %d passes: the next run continues", MAX_PASSES)
    held = state.held_by()
    merges = [Proposal(r["survivor_id"], r["absorbed_id"], r["rule"], r["score"])
              for r in clusters.records.values()
              if held.get(r["absorbed_id"]) == {r["absorbed_id"]} and r["survivor_id"] in state.entities]
    merges.sort(key=lambda m: (m.survivor, m.absorbed))
    new = {merge_id(m.survivor, m.absorbed) for m in merges}
    rewrite = [r for r in clusters.records.values() if r["id"] not in new and r["id"] in state.records
               and any(state.records[r["id"]].get(f) != r[f] for f in FIELDS)]
    if merges:
        candidates = {c.id: c for c in candidates_of(state)}
        apply_merges(store, merges, candidates, records={m.absorbed: clusters.records[merge_id(m.survivor, m.absorbed)]
                                                         for m in merges})
    if rewrite:
        with store.unit() as unit:
            unit.run("entity_merge_record", {"rows": rewrite, "now": now_iso()})
        report.count("merge_records_rewritten", len(rewrite))
    for m in merges:
        report.count(f"merged_{m.rule}")
    report.count("merges", len(merges))
    return merges
