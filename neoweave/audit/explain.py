"""Why an answer was given: a retrieval's trace as a subgraph of the stored graph.

Every strategy records what it visited in its `Trace` (node ids and the relationships it followed) and what it
returned as context (`ContextItem`s, facts, community reports). `explain` turns that into an `Explanation`:
each node with its label, caption, text, role (seed, link, rst, entity, community, ...), score, rank and hop, and
each relationship with what makes it meaningful (a link's context, a relation's description, an RST relation and
its reason, the method that made it), read from the graph by two named statements. The same edges drawn in Neo4j
Browser: `browser_cypher()` gives the `:params` line and the `explain_subgraph` statement.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.query.base import RetrievalResult
from neoweave.store.base import GraphStore

TAG_PREFIX = "tag:"
"""Tags are keyed by name, not id: their view id is the name behind this prefix."""

STRUCTURE_ROLES = {"Section": "section", "Document": "document", "Entity": "entity", "Community": "community",
                   "Tag": "tag"}


@dataclass
class ExplainNode:
    """A node of the explanation: what it is, why it is there (role), and how it scored."""

    id: str
    label: str
    caption: str
    role: str
    """seed, link, rst, kg, ... (a context chunk's origin), walked (a chunk the walk reached but did not return),
    entity, community, section, document or tag."""
    text: str = ""
    score: float | None = None
    rank: int | None = None
    """Position in the context given to the model (1-based), for chunks, facts' entities and reports."""
    hop: int | None = None
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class ExplainRelationship:
    source: str
    type: str
    target: str
    detail: str = ""
    weight: float | None = None
    method: str | None = None
    stored: bool = True
    """False when the trace names an edge the graph no longer holds (the graph changed after the retrieval)."""
    traced: bool = True
    """False for an edge the strategy did not follow, shown to connect what it returned (a context chunk's
    document, a chunk's mention of an entity the strategy linked)."""


@dataclass
class Explanation:
    question: str
    strategy: str
    parameters: dict[str, Any]
    nodes: list[ExplainNode]
    relationships: list[ExplainRelationship]
    answer: str | None = None
    context_tokens: int = 0
    cost: dict[str, Any] = field(default_factory=dict)
    statements: list[str] = field(default_factory=list)
    statement_ms: dict[str, float] = field(default_factory=dict)
    """Milliseconds per named statement of the retrieval (its graph time, statement by statement)."""
    missing: list[str] = field(default_factory=list)
    """Trace ids no longer in the graph."""
    citations: list[dict[str, Any]] = field(default_factory=list)
    """The answer's citations (`neoweave.query.citations.Citation` as data plus its `source`): `number` is
    the cited chunk's rank; `known` false flags a number that names no retrieved item."""

    def node(self, node_id: str) -> ExplainNode | None:
        return next((node for node in self.nodes if node.id == node_id), None)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def browser_parameters(self) -> dict[str, Any]:
        """The parameters of `explain_subgraph`: the stored edges, and the nodes no edge reaches."""
        edges = [{"source": rel.source, "type": rel.type, "target": _key(rel.target)}
                 for rel in self.relationships if rel.stored]
        reached = {rel.source for rel in self.relationships if rel.stored} | {
            rel.target for rel in self.relationships if rel.stored}
        nodes = [{"label": node.label, "id": node.id} for node in self.nodes
                 if node.id not in reached and node.label != "Tag"]
        return {"edges": edges, "nodes": nodes}

    def browser_cypher(self, statement_text: str | None = None) -> str:
        """What to paste into Neo4j Browser: the `:params` line (it sets both parameters), then the statement
        (`explain_subgraph` as Neo4j runs it, unless another text is given)."""
        if statement_text is None:
            from neoweave.cypher import load

            statement_text = load("explain_subgraph", "neo4j").text
        return f":params {cypher_literal(self.browser_parameters())}\n\n{statement_text}\n"

    def to_json(self) -> str:
        """The explanation as JSON (what `POST /explain` returns)."""
        return json.dumps(self.as_dict(), indent=2, default=str)

    def to_html(self, path: str | Path | None = None, *, self_contained: bool = False,
                assets_prefix: str | None = None) -> str:
        """The graph view as an HTML page, returned and written to `path` when given. Written to a file, the page
        is a few kB and loads the renderer from `neoweave-viz-<version>.js/.css`, written beside it once;
        `self_contained=True` inlines the renderer instead (one 4.4 MB file). Not written, the page is
        self-contained unless `assets_prefix` says where the assets are served (the HTTP server's /assets/)."""
        from neoweave.audit.view import render_html, write_html

        if path is None:
            return render_html(self, assets_prefix=assets_prefix)
        try:
            page, _ = write_html(self, Path(path), self_contained=self_contained)
        except OSError as exc:
            raise NeoweaveError(f"cannot write {path}: {exc.strerror}") from exc
        return page


def cypher_literal(value: Any) -> str:
    """A Cypher literal of plain data (Browser's `:params` takes a Cypher map, whose keys are not quoted)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {cypher_literal(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list | tuple):
        return "[" + ", ".join(cypher_literal(item) for item in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(str(value))  # a JSON string is a Cypher string: the same escapes


def _key(node_id: str) -> str:
    """The graph key of a view id (a tag's name)."""
    return node_id[len(TAG_PREFIX):] if node_id.startswith(TAG_PREFIX) else node_id


def explain(result: RetrievalResult, store: GraphStore, *, answer: str | None = None, documents: bool = True,
            citations: list[dict[str, Any]] | None = None) -> Explanation:
    """The subgraph behind `result`, read from `store`: two statements whatever the trace's size.

    `documents` adds each context chunk's document (and its HAS_SECTION edge), so a view shows which pages the
    context came from even when the strategy never walked through them.
    """
    trace = result.trace
    edges = list(trace.relationships)
    traced = set(edges)
    ids: list[str] = []

    def want(node_id: str | None) -> None:
        if node_id and node_id not in ids:
            ids.append(node_id)

    for node_id in trace.nodes:
        want(node_id)
    for item in result.items:
        want(item.section_id)
        want(item.chunk_id)
        if (item.section_id, "HAS_CHUNK", item.chunk_id) not in edges:
            edges.append((item.section_id, "HAS_CHUNK", item.chunk_id))
        if documents and item.doc_id:
            want(item.doc_id)
            if (item.doc_id, "HAS_SECTION", item.section_id) not in edges:
                edges.append((item.doc_id, "HAS_SECTION", item.section_id))
    for fact in result.facts:
        want(fact.source_id)
        want(fact.target_id)
    for report in result.reports:
        want(report.community_id)
    for point in result.points:
        for community_id in point.community_ids:
            want(community_id)
    for node_id in (*trace.seeds, *trace.scores):
        want(node_id)
    tagged = [item.chunk_id for item in result.items if item.details.get("tag_path")]
    if tagged:  # ranked by its tag path (Orion): the tags it is made of, master tags on the document
        for row in store.run("tag_path_inputs", {"chunk_ids": tagged}):
            for source, tags_of in ((row["doc_id"], row["master"]), (row["chunk_id"], row["own"])):
                for tag in tags_of:
                    edge = (source, "TAGGED", tag["name"])
                    if not tag["removed"] and edge not in traced:
                        want(source)
                        edges.append(edge)
                        traced.add(edge)
    tags = list(dict.fromkeys(target for _, rel_type, target in edges if rel_type == "TAGGED"))

    rows = store.run("explain_nodes", {"ids": ids, "tags": tags})
    nodes: dict[str, ExplainNode] = {}
    for row in rows:
        view_id = TAG_PREFIX + row["id"] if row["label"] == "Tag" else row["id"]
        nodes[view_id] = ExplainNode(
            id=view_id, label=row["label"], caption=row["caption"] or row["id"],
            role=STRUCTURE_ROLES.get(row["label"], "walked"), text=row["text"] or "",
            properties={key: row[key] for key in ("doc_id", "section_id", "kind", "order")
                        if row[key] not in (None, "")})
    _add_roles(result, nodes)

    stored = {(row["source"], row["type"], row["target"]): row
              for row in store.run("explain_relationships", {"edges": [
                  {"source": source, "type": rel_type, "target": target} for source, rel_type, target in edges]})}
    relationships = []
    for source, rel_type, target in edges:
        row = stored.get((source, rel_type, target))
        relationships.append(ExplainRelationship(
            source=source, type=rel_type, target=TAG_PREFIX + target if rel_type == "TAGGED" else target,
            detail=(row["detail"] or "").strip(": ") if row else "", weight=_float(row["weight"]) if row else None,
            method=row["method"] if row else None, stored=row is not None,
            traced=(source, rel_type, target) in traced))
    chunk_ids = [node.id for node in nodes.values() if node.label == "Chunk"]
    entity_ids = [node.id for node in nodes.values() if node.label == "Entity"]
    if chunk_ids and entity_ids:
        for row in store.run("explain_mentions", {"chunk_ids": chunk_ids, "entity_ids": entity_ids}):
            if (row["source"], "MENTIONS", row["target"]) not in traced:
                relationships.append(ExplainRelationship(
                    source=row["source"], type="MENTIONS", target=row["target"], detail=row["detail"],
                    weight=_float(row["weight"]), method=row["method"], traced=False))
    cost = {"milliseconds": dict(result.cost.milliseconds), "total_ms": result.cost.total_ms,
            "llm_calls": result.cost.llm_calls,
            "llm_tokens": result.cost.prompt_tokens + result.cost.completion_tokens}
    return Explanation(
        question=result.question, strategy=result.strategy, parameters=dict(result.parameters),
        nodes=list(nodes.values()), relationships=relationships, answer=answer if answer is not None else result.answer,
        context_tokens=result.context_tokens, cost=cost, statements=list(trace.statements),
        statement_ms=dict(trace.statement_ms), citations=list(citations or []),
        missing=[node_id for node_id in ids if node_id not in nodes] + [
            TAG_PREFIX + tag for tag in tags if TAG_PREFIX + tag not in nodes])


def _add_roles(result: RetrievalResult, nodes: dict[str, ExplainNode]) -> None:
    """What each node contributed: context chunks by origin and rank, entities and reports by score."""
    for rank, item in enumerate(result.items, 1):
        node = nodes.get(item.chunk_id)
        if node is None:
            continue
        node.role, node.score, node.rank = item.origin, item.score, rank
        if item.details.get("hop") is not None:
            node.hop = int(item.details["hop"])
        node.properties.update(section_title=item.section_title, url=item.url, token_count=item.token_count,
                               **{key: value for key, value in item.details.items()
                                  if isinstance(value, str | int | float | bool)})
    for rank, fact in enumerate(result.facts, 1):
        for entity_id in (fact.source_id, fact.target_id):
            node = nodes.get(entity_id)
            if node is not None and node.rank is None:
                node.rank, node.score, node.hop = rank, fact.score, fact.hop
    for rank, report in enumerate(result.reports, 1):
        node = nodes.get(report.community_id)
        if node is not None:
            node.rank, node.score = rank, report.score
            node.properties.update(level=report.level, rating=report.rating)
    for node_id, score in result.trace.scores.items():
        node = nodes.get(node_id)
        if node is not None and node.score is None:
            node.score = score
    for node_id, share in result.trace.seeds.items():
        node = nodes.get(node_id)
        if node is not None:
            node.properties["seed_share"] = share
            if node.role == "walked":
                node.role = "seed"


def _float(value: Any) -> float | None:
    return None if value is None else float(value)
