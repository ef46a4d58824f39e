"""The graph model as data: every label, relationship type and index of the platform.

This module is the single source of truth. DDL for each backend, the Cypher linter's DbSchema and the
label/type checks over `neoweave/cypher/*.cypher` are all derived from `SCHEMA`; adding a label is a
one-place change here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

SCHEMA_VERSION = 3
"""3: chunks carry `search_text` (`store.values.search_text`), indexed for full-text search beside `text`."""


@dataclass(frozen=True)
class NodeLabel:
    """A node label with its unique key and the properties statements may read or write."""

    name: str
    key: str
    properties: tuple[str, ...]
    extra_labels: tuple[str, ...] = ()
    indexed: tuple[str, ...] = ()
    """Non-key properties that get a range index (lookups such as "all chunks of a document")."""
    doc: str = ""


@dataclass(frozen=True)
class RelType:
    """A relationship type with its endpoint labels and properties."""

    name: str
    start: str
    end: str
    properties: tuple[str, ...] = ()
    doc: str = ""


@dataclass(frozen=True)
class VectorIndex:
    """A cosine vector index on one node property; its dimension comes from the embedding model."""

    name: str
    label: str
    property: str


@dataclass(frozen=True)
class FulltextIndex:
    """A full-text (BM25) index over one or more string properties of a label."""

    name: str
    label: str
    properties: tuple[str, ...]


@dataclass(frozen=True)
class GraphSchema:
    version: int
    labels: tuple[NodeLabel, ...]
    relationships: tuple[RelType, ...]
    vector_indexes: tuple[VectorIndex, ...]
    fulltext_indexes: tuple[FulltextIndex, ...]
    _by_name: dict[str, NodeLabel] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        names = [label.name for label in self.labels]
        if len(set(names)) != len(names):
            raise ValueError(f"duplicate node label in schema: {names}")
        self._by_name.update({label.name: label for label in self.labels})
        for rel in self.relationships:
            for end in (rel.start, rel.end):
                if end not in self._by_name:
                    raise ValueError(f"relationship {rel.name} refers to unknown label {end}")
        for index in (*self.vector_indexes, *self.fulltext_indexes):
            if index.label not in self._by_name:
                raise ValueError(f"index {index.name} refers to unknown label {index.label}")

    def label(self, name: str) -> NodeLabel:
        try:
            return self._by_name[name]
        except KeyError:
            raise KeyError(f"unknown node label {name!r}; known: {sorted(self._by_name)}") from None

    def vector_index(self, name: str) -> VectorIndex:
        for index in self.vector_indexes:
            if index.name == name:
                return index
        known = [i.name for i in self.vector_indexes]
        raise KeyError(f"unknown vector index {name!r}; known: {known}")

    def fulltext_index(self, name: str) -> FulltextIndex:
        for index in self.fulltext_indexes:
            if index.name == name:
                return index
        known = [i.name for i in self.fulltext_indexes]
        raise KeyError(f"unknown full-text index {name!r}; known: {known}")

    @property
    def all_label_names(self) -> list[str]:
        """Every label a node may carry, including secondary ones such as `__Entity__`."""
        names: list[str] = []
        for label in self.labels:
            names.append(label.name)
            names.extend(extra for extra in label.extra_labels if extra not in names)
        return names

    @property
    def relationship_names(self) -> list[str]:
        return sorted({rel.name for rel in self.relationships})

    @property
    def property_keys(self) -> list[str]:
        keys: set[str] = set()
        for label in self.labels:
            keys.update(label.properties)
            keys.add(label.key)
        for rel in self.relationships:
            keys.update(rel.properties)
        return sorted(keys)


BOOKKEEPING = frozenset({"stamp", "changed_entity_ids", "changes_overflow", "changes_fingerprint",
                         "changes_finished", "changes_log", "changes_base", "changes_consumed", "changes_walk",
                         "changes_titles", "changes_titles_finished"})
"""Properties that record the store's own bookkeeping, not what the graph holds: the Meta node's write stamp
names the last write to one store; the kg step's record of change (`enrich.kg_changes`) what that store's
writes changed since its last completed run (a store importing a graph reads every entity once). Exports leave
them out (the importing store gets its own) and snapshots ignore them."""

# Properties every derived element carries so it can be rebuilt or deleted when its source changes.
_PROVENANCE = ("method", "source", "created_at")
# A tag edge: its rank among the element's tags, its weight (similarity or the model's order), and for a user
# edit who made it and when; `removed` marks a machine tag the user took away (kept, so re-tagging skips it).
_TAGGED = ("rank", "weight", "removed", "by", "edited_at", *_PROVENANCE)

SCHEMA = GraphSchema(
    version=SCHEMA_VERSION,
    labels=(
        NodeLabel(
            "Document",
            key="id",
            properties=("title", "url", "source", "path", "published_at", "content_hash", "format",
                        "encoding",  # the text encoding a text, Markdown or HTML file was read in
                        "metadata_json", "created_at", "updated_at", "anchors_json", "first_section_id",
                        "links_pending", "links_resolved", "links_unresolved",
                        "incomplete_hash", "sections_written", "sections_total"),  # a large one being written
            indexed=("url", "path", "links_pending"),  # links_pending: link resolution finds pending pages
            doc="One source document (an HTML page, a JSONL record, a text file).",
        ),
        NodeLabel(
            "Section",
            key="id",
            properties=("doc_id", "anchor", "title", "url", "order", "level", "start", "end",
                        "page_start", "page_end",  # the pages a PDF section spans
                        "links_json", "unresolved_links_json", "inferred_pending", "titles_scanned"),
            indexed=("doc_id", "url", "inferred_pending"),
            doc="A titled part of a document; hyperlinks point at sections.",
        ),
        NodeLabel(
            "Chunk",
            key="id",
            properties=("doc_id", "section_id", "text", "search_text", "order", "start", "end", "embedding",
                        "token_count", "external_links_json", "tag_path", "tag_path_embedding", "enriched",
                        "titles_scanned", "main_idea", "keywords", "paragraph_type", "type_reason",
                        "main_idea_embedding", "keywords_embedding", "rst_method"),
            indexed=("doc_id",),
            doc="A retrievable span of text with its embedding.",
        ),
        NodeLabel(
            "Entity",
            key="id",
            properties=("key", "name", "type", "description", "aliases", "aliases_text", "embedding", "mention_count",
                        "relation_count", "description_chunk", *_PROVENANCE),
            indexed=("name", "key"),  # key: the normalised name, for exact lookups (question entities, homes)
            extra_labels=("__Entity__",),
            doc="A named thing extracted from chunks; also labelled __Entity__ by convention.",
        ),
        NodeLabel(
            "EntityMerge",
            key="id",
            properties=("survivor_id", "absorbed_id", "absorbed_json", "rule", "score", "forms", "via",
                        "status", *_PROVENANCE, "undone_at"),
            indexed=("absorbed_id", "survivor_id"),
            doc="One entity-resolution decision: which entity was merged into which, by which rule; undoable.",
        ),
        NodeLabel(
            "Community",
            key="id",
            properties=("level", "title", "summary", "full_report", "findings_json", "rating", "rank", "embedding",
                        "size", "children", "chunk_ids", "fingerprint", "report_fingerprint", "report_source",
                        "token_count", *_PROVENANCE),
            doc="A Leiden community of entities with its report (id from level + members: stable across runs).",
        ),
        NodeLabel("Tag", key="name", properties=("created_at",),
                  doc="An Orion-RAG topic tag; its name is the normalised tag (lower case, single spaces)."),
        NodeLabel(
            "Meta",
            key="id",
            properties=("schema_version", "embedding_model", "dimension", "created_at", "updated_at", "stamp",
                        "fingerprint", "members_changed", "import_source", "records_loaded", "changed_entity_ids",
                        "changes_overflow", "changes_fingerprint", "changes_finished", "changes_log", "changes_base",
                        "changes_consumed", "changes_walk", "changes_titles", "changes_titles_finished"),
            doc="One node recording the schema version and the embedding model the graph was built with, and the "
                "write stamp (a random token every write through neoweave replaces: ppr's walk index is used only "
                "at the stamp it was built at); "
                "id 'communities' records the entity graph the communities were detected on, and the communities "
                "a member of which changed since their report (members_changed); id 'kg_changes' logs the "
                "entities whose mentions or relations changed (changed_entity_ids: the last 20,000; changes_log "
                "names the log, changes_base is the position of its first kept entry, changes_consumed the "
                "position `enrich kg` read up to when it last completed its graph-wide phases, with the "
                "fingerprint and token of that completion: changes_fingerprint, changes_finished; changes_walk "
                "the position ppr's walk index was last built from; changes_titles the title index's digests as "
                "of that completion (JSON), changes_titles_finished its token; changes_overflow is an older "
                "neoweave's); "
                "id 'import' marks an unfinished "
                "`neoweave import` (fingerprint of the export's manifest, import_source, records_loaded).",
        ),
    ),
    relationships=(
        RelType("HAS_SECTION", "Document", "Section"),
        RelType("HAS_CHUNK", "Section", "Chunk"),
        RelType("NEXT_CHUNK", "Chunk", "Chunk"),
        RelType("LINKS_TO", "Section", "Section",
                properties=("url", "anchor", "context", "context_embedding", "text", "order", "start", "method",
                            "entity_id", "chunk_id"),
                doc="A hyperlink: authored (method null or 'authored') or inferred from an entity mention."),
        RelType("MENTIONS", "Chunk", "Entity",
                properties=("origin_ids", "names", "types", "counts", "contexts", "methods", "sources", "count", "name",
                            "type", "context", "origin_id", "description", "description_start", "description_end",
                            *_PROVENANCE),
                doc="One edge per chunk and entity, holding the surface forms the chunk mentions it by (one per "
                    "origin entity, so a merge can be undone). One form (99 % of edges): its scalars origin_id, "
                    "name, type, count, context, method, source. Two or more: parallel lists origin_ids, names, "
                    "types, counts, contexts, methods, sources, count = their total, name/method/source/origin_id "
                    "those of the entity's own form (else the smallest origin id), its context `contexts` at "
                    "origin_id's index; read both shapes as coalesce(m.names, [m.name]). The mention's description: "
                    "a model's text in `description`, or a sentence of the chunk as its offsets in the chunk's "
                    "text, `description_start` and `description_end` (edges written before 2026-11-28 hold the "
                    "sentence as text)."),
        RelType("RELATED", "Entity", "Entity",
                properties=("type", "description", "weight", "chunk_id", "chunk_ids", "chunk_weights", "descriptions",
                            *_PROVENANCE),
                doc="One edge per (source, target, type), holding its evidence: one chunk as `chunk_id`, `weight` "
                    "and `description`; more as parallel lists `chunk_ids`, `chunk_weights`, `descriptions`, "
                    "`weight` their sum and `description` the smallest chunk id's. Read both shapes as "
                    "coalesce(r.chunk_ids, [r.chunk_id])."),
        RelType("DESCRIBED_BY", "Entity", "Section", properties=("rule", *_PROVENANCE),
                doc="The section (or document's first section) whose title names the entity: its home."),
        RelType("RST", "Chunk", "Chunk", properties=("relation", "weight", "reason", "similarity", *_PROVENANCE),
                doc="A rhetorical relation (KHL-RAG): the later paragraph is `relation` of the earlier one "
                    "(Example, Result, ...), confidence `weight` in (0, 10]; one edge per relation."),
        RelType("IN_COMMUNITY", "Entity", "Community", properties=("level",)),
        RelType("PARENT_COMMUNITY", "Community", "Community"),
        RelType("TAGGED", "Chunk", "Tag", properties=_TAGGED,
                doc="A paragraph tag (Orion-RAG); method fast | llm | user, a user edit never overwritten."),
        RelType("TAGGED", "Document", "Tag", properties=_TAGGED, doc="A master tag of the document (Orion-RAG)."),
    ),
    vector_indexes=(
        VectorIndex("chunk_embedding", "Chunk", "embedding"),
        VectorIndex("entity_embedding", "Entity", "embedding"),
        VectorIndex("community_embedding", "Community", "embedding"),
        VectorIndex("chunk_tag_path_embedding", "Chunk", "tag_path_embedding"),
        VectorIndex("chunk_main_idea_embedding", "Chunk", "main_idea_embedding"),
        VectorIndex("chunk_keywords_embedding", "Chunk", "keywords_embedding"),
    ),
    fulltext_indexes=(
        # search_text: the text with line breaks folded, where it has any (FalkorDB's tokenizer does not split
        # words at them); Neo4j's analyzer would not need it
        FulltextIndex("chunk_text", "Chunk", ("text", "search_text")),
        FulltextIndex("entity_name", "Entity", ("name", "aliases_text")),
    ),
)
