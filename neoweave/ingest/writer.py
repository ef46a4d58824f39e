"""Write parsed, embedded documents into the graph; resolve hyperlinks; delete documents.

Every document batch is written as one unit (`store.unit()`: a Neo4j transaction, a FalkorDB MULTI/EXEC
block), so a crash leaves each document either as it was or fully rewritten, never half-written. A large
document is written a part (a few whole sections) per unit, marked incomplete until its last part is stored
(`ingest.parts`): a crash leaves it with whole sections and a count the next run continues from. Links are
resolved afterwards from what is stored (`Section.links_json`); a document keeps `links_pending = true`
until that is done, so an interrupted run finishes its link resolution on the next run.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from neoweave.ingest.documents import Document, Section
from neoweave.ingest.link_contexts import carry_link_contexts
from neoweave.ingest.parts import DocumentPart, WriteState
from neoweave.protocols import TextEmbedder
from neoweave.store.base import GraphStore, WriteUnit
from neoweave.store.provenance import counted_by, forget_chunks, forget_unused
from neoweave.store.values import now_iso, search_text

log = logging.getLogger(__name__)

_RESERVED = frozenset({"id", "title", "url", "source", "path", "format", "content_hash", "metadata_json",
                       "published_at", "anchors_json", "first_section_id", "links_pending", "links_resolved",
                       "links_unresolved", "updated_at", "created_at", "incomplete_hash", "sections_written",
                       "sections_total"})
_PROPERTY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _document_props(doc: Document) -> dict[str, Any]:
    """Every property of the Document node: plain metadata values as properties, the rest as JSON."""
    props: dict[str, Any] = {}
    nested: dict[str, Any] = {}
    for key, value in doc.metadata.items():
        plain = isinstance(value, str | int | float | bool) and value is not None
        if plain and _PROPERTY_NAME.match(key) and key not in _RESERVED:
            props[key] = value
        elif value is not None:
            nested[key] = value
    internal_links = sum(1 for s in doc.sections for link in s.links if link.internal)
    props.update({
        "id": doc.id, "title": doc.title, "url": doc.url, "source": doc.source, "path": doc.path,
        "format": doc.format, "content_hash": doc.content_hash, "updated_at": now_iso(),
        "anchors_json": json.dumps(doc.anchor_map(), ensure_ascii=False),
        "first_section_id": doc.sections[0].id if doc.sections else None,
        "links_pending": internal_links > 0, "links_resolved": 0, "links_unresolved": 0,
    })
    if nested:
        props["metadata_json"] = json.dumps(nested, ensure_ascii=False, default=str)
    if doc.published_at:
        props["published_at"] = doc.published_at
    return {k: v for k, v in props.items() if v is not None}


def _incomplete_props(doc: Document, sections_written: int) -> dict[str, Any]:
    """The Document node of a large document while its parts are written: no content hash (the next run reads
    the file again), no anchors (other documents' links reach it once it is complete), and its progress."""
    props = _document_props(doc)
    for name in ("content_hash", "anchors_json", "first_section_id"):
        props.pop(name, None)
    props.update({"links_pending": False, "incomplete_hash": doc.content_hash,
                  "sections_written": sections_written, "sections_total": len(doc.sections)})
    return props


def _section_rows(doc: Document, sections: list[Section] | None = None) -> list[dict[str, Any]]:
    rows = []
    for section in doc.sections if sections is None else sections:
        links = [{"u": link.target_url, "a": link.anchor, "t": link.text, "c": link.context, "o": order,
                  "s": link.start} for order, link in enumerate(section.links) if link.internal]
        props = {"id": section.id, "doc_id": doc.id, "anchor": section.anchor, "title": section.title,
                 "url": section.url, "order": section.order, "level": section.level, "start": section.start,
                 "end": section.end}
        if section.pages:
            props["page_start"], props["page_end"] = section.pages
        if links:
            props["links_json"] = json.dumps(links, ensure_ascii=False)
        rows.append({"id": section.id, "doc_id": doc.id, "props": props})
    return rows


def _chunk_rows(doc: Document, sections: list[Section] | None = None) -> list[dict[str, Any]]:
    rows = []
    for section in doc.sections if sections is None else sections:
        for chunk in section.chunks:
            if chunk.embedding is None:
                raise ValueError(f"chunk {chunk.id} has no embedding")
            rows.append({
                "id": chunk.id, "doc_id": doc.id, "section_id": section.id, "text": chunk.text,
                "search_text": search_text(chunk.text),
                "order": chunk.order, "start": chunk.start, "end": chunk.end,
                "token_count": chunk.token_count,
                "external_links_json": json.dumps(chunk.external_links, ensure_ascii=False)
                if chunk.external_links else None,
                "embedding": chunk.embedding,
            })
    return rows


def _next_rows(doc: Document) -> list[dict[str, str]]:
    chunks = doc.chunks
    return [{"from_id": a.id, "to_id": b.id} for a, b in itertools.pairwise(chunks)]


@dataclass
class LinkReport:
    documents: int = 0
    resolved: int = 0
    unresolved: int = 0
    self_links: int = 0
    contexts_embedded: int = 0
    """Links whose context was embedded as they were resolved (new or changed; the others kept theirs)."""


class GraphWriter:
    links_per_unit: int = 2000
    """Links resolved (and their contexts embedded) per write unit."""

    def __init__(self, store: GraphStore, embedder: TextEmbedder | None = None) -> None:
        """`embedder` embeds the contexts of the links resolution creates, in the unit that creates them (without
        one they wait for `embed_all_link_contexts`, and retrieval skips them meanwhile)."""
        self.store = store
        self.embedder = embedder

    def stored_hashes(self, ids: Iterable[str]) -> dict[str, str]:
        rows = self.store.run("document_hashes", {"ids": list(ids)})
        return {row["id"]: row["content_hash"] for row in rows}

    def write_states(self, ids: Iterable[str]) -> dict[str, WriteState]:
        """What the graph holds of these documents (absent: not stored), complete or not."""
        rows = self.store.run("document_hashes", {"ids": list(ids)})
        return {row["id"]: WriteState(row["content_hash"], row["incomplete_hash"], int(row["sections_written"] or 0))
                for row in rows}

    def incomplete_documents(self) -> list[dict[str, Any]]:
        """Documents a stopped run left partly written: id, source, sections_written, sections_total."""
        return self.store.run("incomplete_documents")

    def write_documents(self, docs: list[Document], changed_ids: set[str]) -> None:
        """Write (or rewrite) documents with their sections, chunks and reading order, as one unit."""
        if not docs:
            return
        changed = [doc.id for doc in docs if doc.id in changed_ids]
        keep = [{"doc_id": doc.id, "keep_section_ids": [s.id for s in doc.sections]}
                for doc in docs if doc.id in changed_ids]
        old_chunks = self._chunk_ids(changed)
        counted = counted_by(self.store, old_chunks)
        with self.store.unit() as unit:
            if changed:
                self._forget_old_version(unit, changed, keep, old_chunks, counted)
            unit.run("upsert_documents", {"rows": [{"id": d.id, "props": _document_props(d)} for d in docs]})
            unit.run("upsert_sections", {"rows": [row for d in docs for row in _section_rows(d)]})
            chunk_rows = [row for d in docs for row in _chunk_rows(d)]
            if chunk_rows:
                unit.run("upsert_chunks", {"rows": chunk_rows})
            next_rows = [row for d in docs for row in _next_rows(d)]
            if next_rows:
                unit.run("link_next_chunks", {"rows": next_rows})

    def write_part(self, part: DocumentPart) -> None:
        """Write some sections of a large document with their chunks as one unit: the first part of a fresh
        write replaces what the graph held of the document and marks it incomplete; each part records how many
        sections are stored; the last one gives the Document node its content hash (complete)."""
        doc, sections = part.doc, part.section_list
        old_chunks = self._chunk_ids([doc.id]) if part.begin and part.changed else []
        counted = counted_by(self.store, old_chunks)
        with self.store.unit() as unit:
            if part.begin and part.changed:
                keep = [{"doc_id": doc.id, "keep_section_ids": [s.id for s in doc.sections]}]
                self._forget_old_version(unit, [doc.id], keep, old_chunks, counted)
            if part.last:
                unit.run("upsert_documents", {"rows": [{"id": doc.id, "props": _document_props(doc)}]})
            elif part.begin:
                unit.run("upsert_documents", {"rows": [{"id": doc.id, "props": _incomplete_props(doc, part.end)}]})
            else:
                unit.run("document_sections_written", {"rows": [{"id": doc.id, "sections_written": part.end}]})
            unit.run("upsert_sections", {"rows": _section_rows(doc, sections)})
            chunk_rows = _chunk_rows(doc, sections)
            if chunk_rows:
                unit.run("upsert_chunks", {"rows": chunk_rows})
            chunks = [c.id for section in sections for c in section.chunks]
            previous = part.previous_chunk_id()
            order = [previous, *chunks] if previous else chunks
            if len(order) > 1:
                unit.run("link_next_chunks", {"rows": [{"from_id": a, "to_id": b}
                                                       for a, b in itertools.pairwise(order)]})

    @staticmethod
    def _forget_old_version(unit: WriteUnit, doc_ids: list[str], keep: list[dict[str, Any]], old_chunks: list[str],
                            counted: dict[str, list[str]]) -> None:
        """Queue the removal of what the graph holds of documents about to be rewritten: their chunks (and what
        enrichers derived from them), outgoing links, and sections the new version does not have."""
        forget_chunks(unit, old_chunks, counted)
        unit.run("delete_document_chunks", {"doc_ids": doc_ids})
        unit.run("delete_document_outgoing_links", {"doc_ids": doc_ids})
        unit.run("mark_documents_linking_to_removed_sections", {"rows": keep})
        unit.run("delete_stale_sections", {"rows": keep})
        forget_unused(unit)

    def resolve_links(self, *, batch: int = 100, retry_unresolved: bool = False) -> LinkReport:
        """Turn stored link data into LINKS_TO edges for every document still marked pending."""
        report = LinkReport()
        if retry_unresolved:
            self.store.run("mark_unresolved_documents_pending", write=True)
        while True:
            doc_ids = [row["id"] for row in self.store.run("pending_link_documents", {"limit": batch})]
            if not doc_ids:
                return report
            self._resolve_batch(doc_ids, report)

    def _resolve_batch(self, doc_ids: list[str], report: LinkReport) -> None:
        """Resolve the links of these documents, whole sections of them per write unit (about `links_per_unit`
        links with their context embeddings: a large page's links are many units, never all of them, with their
        vectors, in memory at once). The documents stay pending until the last unit, so a run stopped between
        units resolves them again (the links already made keep their context embeddings)."""
        links_per_unit = self.links_per_unit
        sections = self.store.run("section_links", {"doc_ids": doc_ids})
        parsed = [(row, json.loads(row["links_json"]) if row["links_json"] else []) for row in sections]
        urls = sorted({link["u"] for _, links in parsed for link in links})
        targets = {row["url"]: (json.loads(row["anchors_json"] or "{}"), row["first_section_id"])
                   for row in self.store.run("document_anchor_maps", {"urls": urls})} if urls else {}
        per_doc: dict[str, list[int]] = {doc_id: [0, 0] for doc_id in doc_ids}
        groups: list[list[tuple[str, list[dict[str, Any]], dict[str, Any] | None]]] = [[]]
        size = 0
        for row, links in parsed:
            link_rows, unresolved = self._section_link_rows(row["section_id"], links, targets, report)
            per_doc[row["doc_id"]][0] += len(link_rows)
            per_doc[row["doc_id"]][1] += len(unresolved)
            unresolved_row = {"section_id": row["section_id"], "unresolved_links_json": json.dumps(
                unresolved, ensure_ascii=False) if unresolved else None} if unresolved or links else None
            if size and size + len(link_rows) > links_per_unit:
                groups.append([])
                size = 0
            groups[-1].append((row["section_id"], link_rows, unresolved_row))
            size += len(link_rows)
        for number, group in enumerate(groups, 1):
            link_rows = [link for _, rows, _ in group for link in rows]
            unresolved_rows = [row for _, _, row in group if row]
            stored = [link for link in self.store.run("section_links_out", {"section_ids": [s for s, _, _ in group]})
                      if link["method"] == "authored"] if group else []
            stale, embeddings = carry_link_contexts(stored, link_rows, self.embedder)
            with self.store.unit() as unit:  # links change with their context embeddings: none is ever seen without
                unit.run_batches("delete_links", stale)
                unit.run_batches("create_links", link_rows)
                unit.run_batches("set_link_context_embeddings", embeddings)
                if unresolved_rows:
                    unit.run("set_unresolved_links", {"rows": unresolved_rows})
                if number == len(groups):
                    unit.run("finish_link_resolution", {"rows": [
                        {"doc_id": doc_id, "resolved": counts[0], "unresolved": counts[1]}
                        for doc_id, counts in per_doc.items()]})
            report.contexts_embedded += len(embeddings)
        report.documents += len(doc_ids)
        report.resolved += sum(c[0] for c in per_doc.values())
        report.unresolved += sum(c[1] for c in per_doc.values())

    @staticmethod
    def _section_link_rows(section_id: str, links: list[dict[str, Any]],
                           targets: dict[str, tuple[dict[str, str], str | None]], report: LinkReport
                           ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """One section's stored links as `create_links` rows, and those whose target is not in the graph."""
        rows: list[dict[str, Any]] = []
        unresolved: list[dict[str, Any]] = []
        for link in links:
            anchors, first = targets.get(link["u"], ({}, None))
            target = anchors.get(link["a"]) if link["a"] else first
            if target is None:
                unresolved.append({"url": f"{link['u']}#{link['a']}" if link["a"] else link["u"], "text": link["t"]})
                continue
            if target == section_id:
                report.self_links += 1  # a section pointing into itself adds nothing to traverse
                continue
            rows.append({"source_id": section_id, "target_id": target, "order": link["o"],
                         "url": f"{link['u']}#{link['a']}" if link["a"] else link["u"],
                         "anchor": link["a"], "text": link["t"], "context": link["c"],
                         "start": link.get("s")})  # None for sections stored before offsets were
        return rows, unresolved

    def _chunk_ids(self, doc_ids: list[str]) -> list[str]:
        if not doc_ids:
            return []
        return [row["id"] for row in self.store.run("document_chunk_ids", {"doc_ids": doc_ids})]

    def find_documents(self, key: str, folder: str) -> list[dict[str, Any]]:
        return self.store.run("find_documents", {"key": key, "folder": folder})

    def delete_documents(self, doc_ids: list[str], *, refresh_indexes: bool = True) -> LinkReport:
        """Remove documents and everything only they own; links into them become unresolved elsewhere.
        `refresh_indexes=False` leaves the vector index rebuild to the caller (sync: once for all its changes)."""
        if not doc_ids:
            return LinkReport()
        old_chunks = self._chunk_ids(doc_ids)
        counted = counted_by(self.store, old_chunks)
        with self.store.unit() as unit:
            unit.run("mark_documents_linking_to_removed_sections",
                     {"rows": [{"doc_id": doc_id, "keep_section_ids": []} for doc_id in doc_ids]})
            forget_chunks(unit, old_chunks, counted)
            unit.run("delete_document_chunks", {"doc_ids": doc_ids})
            unit.run("delete_document_sections", {"doc_ids": doc_ids})
            unit.run("delete_document_nodes", {"doc_ids": doc_ids})
            forget_unused(unit)
        if refresh_indexes:
            self.store.refresh_vector_indexes(("Chunk", "Entity"))
        return self.resolve_links()
