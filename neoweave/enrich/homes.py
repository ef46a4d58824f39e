"""Entity homes and inferred links: LARAG's hyperlinks for corpora whose authors wrote none.

A section whose title names an entity (an encyclopedia article, an API reference section, the element
id of a documented object) is that entity's home: `(:Entity)-[:DESCRIBED_BY]->(:Section)`. A section
mentioning an entity whose home is elsewhere gets an inferred `LINKS_TO` to the home, with the mention's
surrounding words as its context, so LARAG follows it exactly like an authored link.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field

from tqdm import tqdm

from neoweave.enrich.base import EnrichReport
from neoweave.ingest.link_contexts import carry_link_contexts
from neoweave.nlp.names import entity_key, normalize, title_variants
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore

# Rule priority: a name matched by a better rule ignores weaker matches.
from neoweave.store.values import now_iso

# Rule priority: a name matched by a better rule ignores weaker matches.
RULES = ("document-title", "section-title", "anchor", "parenthetical", "head")
MAX_HOMES = 3
"""A name matching more sections than this under its best rule is generic ("Examples"): no home."""
_IDENTIFIER = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+$")


@dataclass
class TitleIndex:
    """What titles and API anchors can name: the raw material of homes and of title mentions."""

    sections: dict[str, dict[str, list[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(list)))
    """normalised name -> rule -> section ids (concept names singularised too)."""
    surfaces: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    """normalised name -> the title texts (case kept) that give it, for matching titles in chunk text."""
    new_keys: set[str] = field(default_factory=set)
    """Names given by sections not yet scanned for title mentions (new or re-ingested)."""
    unscanned_keys: set[str] = field(default_factory=set)
    """Every name those sections give (`new_keys` leaves out names older sections give too)."""
    unscanned_sections: list[str] = field(default_factory=list)

    def add(self, key: str, rule: str, section_id: str) -> list[str]:
        variants = sorted({key, entity_key(key, "concept")})
        for variant in variants:
            if section_id not in self.sections[variant][rule]:
                self.sections[variant][rule].append(section_id)
        return variants

    def digests(self) -> dict[str, str]:
        """name -> a digest of the sections it names under each rule: two indexes give a name the same homes
        where its digests agree."""
        return {key: hashlib.sha1(json.dumps({rule: sorted(ids) for rule, ids in rules.items() if ids},
                                             sort_keys=True).encode()).hexdigest()[:12]
                for key, rules in self.sections.items()}

    def changed_keys(self, earlier: dict[str, str]) -> set[str]:
        """Names whose homes may differ from those an index with `earlier` digests gave: names whose sections
        changed, and every name of a section not scanned since (re-ingested under the same id, it lost its
        homes' edges)."""
        now = self.digests()
        return {key for key in now.keys() | earlier.keys() if now.get(key) != earlier.get(key)} | self.unscanned_keys


def title_index(store: GraphStore) -> TitleIndex:
    """Every section title, document title (on its first section) and API anchor, by normalised name."""
    index = TitleIndex()
    old_keys: set[str] = set()
    for row in store.run("kg_section_titles"):
        names = [(key, "section-title" if how == "exact" else how, surface)
                 for key, how, surface in title_variants(row["title"] or "")]
        if row["doc_title"] and row["section_id"] == row["first_section_id"]:
            names += [(key, "document-title" if how == "exact" else how, surface)
                      for key, how, surface in title_variants(row["doc_title"])]
        for key, rule, surface in names:
            variants = index.add(key, rule, row["section_id"])
            index.surfaces[key].add(surface)
            (old_keys if row["titles_scanned"] else index.new_keys).add(key)
            if not row["titles_scanned"]:
                index.unscanned_keys.update(variants)
        if not row["titles_scanned"]:
            index.unscanned_sections.append(row["section_id"])
    index.new_keys -= old_keys
    unscanned = set(index.unscanned_sections)
    for row in store.run("kg_document_anchors"):
        for element_id, section_id in json.loads(row["anchors_json"] or "{}").items():
            if _IDENTIFIER.match(element_id):
                variants = index.add(normalize(element_id), "anchor", section_id)
                if section_id in unscanned:
                    index.unscanned_keys.update(variants)
    return index


def homes_for(keys: list[str], index: TitleIndex) -> tuple[list[str], str]:
    """The home sections for an entity's keys under the best rule any key matches."""
    for rule in RULES:
        sections = list(dict.fromkeys(s for key in keys for s in index.sections.get(key, {}).get(rule, [])))
        if sections:
            return (sections, rule) if len(sections) <= MAX_HOMES else ([], rule)
    return [], ""


def update_homes(store: GraphStore, report: EnrichReport, index: TitleIndex | None = None, *,
                 entity_ids: frozenset[str] | None = None, keys: set[str] | None = None) -> None:
    """Recompute every entity's homes, or (`entity_ids` and `keys` given) those of the entities named, of those
    whose key is one of `keys` and of every alias holder; sections mentioning entities whose home changed get
    pending links."""
    index = index or title_index(store)
    add_rows, remove_rows, changed = [], [], []
    rows = store.run("kg_entities_for_homes") if entity_ids is None or keys is None else \
        store.run("kg_entities_for_homes_of", {"ids": sorted(entity_ids), "keys": sorted(keys)})
    for row in rows:
        group = row["id"].split(":", 1)[0]
        keys = [row["key"], *(entity_key(alias, group) for alias in row["aliases"] or [])]
        sections, rule = homes_for([k for k in keys if k], index)
        old = set(row["homes"] or [])
        if set(sections) == old:
            continue
        changed.append(row["id"])
        add_rows += [{"entity_id": row["id"], "section_id": s, "rule": rule} for s in sections if s not in old]
        remove_rows += [{"entity_id": row["id"], "section_id": s} for s in old if s not in sections]
    now = now_iso()
    store.write_batches("kg_remove_homes", remove_rows)
    store.write_batches("kg_set_homes", add_rows, params={"now": now})
    for start in range(0, len(changed), store.batch_size):
        store.run("kg_mark_entity_sections_pending", {"entity_ids": changed[start:start + store.batch_size]},
                  write=True)
    report.count("homes_added", len(add_rows))
    report.count("homes_removed", len(remove_rows))


def update_inferred_links(store: GraphStore, report: EnrichReport, *, max_links: int = 30, batch: int = 200,
                          progress: bool = True, embedder: TextEmbedder | None = None) -> None:
    """Recompute the inferred links of every pending section (one unit per batch of sections, the links' context
    embeddings in it: `embedder` embeds those of new or changed links, an unchanged link keeps its own)."""
    total = int(store.run("kg_count_pending_sections")[0]["pending"] or 0) if progress else None
    bar = tqdm(total=total, desc="inferred links", unit="section", disable=not progress)
    now = now_iso()
    while True:
        section_ids = [row["id"] for row in store.run("kg_pending_sections", {"limit": batch})]
        if not section_ids:
            break
        rows = store.run("kg_inferred_candidates", {"section_ids": section_ids})
        rows.sort(key=lambda r: (r["source_id"], r["chunk_order"] or 0, r["chunk_id"], r["entity_id"], r["target_id"]))
        links: list[dict] = []
        per_source: dict[str, set[str]] = defaultdict(set)
        for row in rows:
            targets = per_source[row["source_id"]]
            if row["target_id"] in targets or len(targets) >= max_links:
                continue  # one inferred link per pair of sections: the first mention's
            targets.add(row["target_id"])
            links.append({"source_id": row["source_id"], "target_id": row["target_id"], "order": -len(targets),
                          "text": row["name"], "context": row["context"], "entity_id": row["entity_id"],
                          "chunk_id": row["chunk_id"]})
        stored = store.run("section_links_out", {"section_ids": section_ids})
        authored = {(row["source_id"], row["target_id"]) for row in stored if row["method"] == "authored"}
        links = [link for link in links if (link["source_id"], link["target_id"]) not in authored]
        stale, embeddings = carry_link_contexts([row for row in stored if row["method"] == "inferred"], links,
                                                embedder)
        with store.unit() as unit:  # links change with their context embeddings: none is ever seen without
            unit.run_batches("delete_links", stale)
            unit.run_batches("kg_create_inferred_links", links, {"now": now})
            unit.run_batches("set_link_context_embeddings", embeddings)
            unit.run("kg_clear_sections_pending", {"section_ids": section_ids})
        report.count("inferred_links", len(links))
        report.count("link_contexts_embedded", len(embeddings))
        report.count("sections_relinked", len(section_ids))
        bar.update(len(section_ids))
    bar.close()
