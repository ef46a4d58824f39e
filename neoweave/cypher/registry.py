"""Named Cypher statements: one `.cypher` file per statement, loaded by name, rendered per backend.

A statement is written once in the Cypher subset both backends run. The few spots where the dialects
differ are written as macros that render per backend:

- ``{{vector EXPR}}``: a list of floats stored as a vector (FalkorDB needs ``vecf32()``).
- ``{{cosine A B}}``: cosine similarity in [-1, 1] (FalkorDB: 1 - vec.cosineDistance; Neo4j:
  2 * vector.similarity.cosine - 1, since Neo4j's cosine is (1 + cos) / 2). A and B are stored vectors or
  variables, never a parameter: bind ``WITH {{vector $p}} AS q`` once (FalkorDB re-converts a parameter
  list with vecf32 on every row: 5 us per row, 4x the cosine itself).
- ``{{vector_nodes INDEX K EMBEDDING}}``: top-K nodes of a schema vector index, yielding ``node`` and
  ``score`` (cosine similarity in [-1, 1] on both backends), best first. A statement using it is also rendered
  as an exact search (`Statement.exact_text`: every vector of the label compared), which the store runs while
  the label has at most `GraphStore.exact_search_below` nodes: the true top K, and the same on every copy of
  the graph, where an approximate index rebuilt in another order can miss a neighbour.
- ``{{indexed_vector_nodes INDEX K EMBEDDING}}``: the same, from the index always (a bulk derivation's search
  per chunk, where reading every vector each time would cost minutes).
- ``{{fulltext_nodes INDEX QUERY}}``: BM25 hits of a schema full-text index, yielding ``node, score``.
- ``{{key_after KEY CURSOR}}``: ``KEY > CURSOR`` for paging in key order (with ``ORDER BY KEY``). FalkorDB's
  range index compares strings by signed bytes, so ``n.id > $after`` answered from it skips every key with a
  non-ASCII character after an ASCII cursor, while ``ORDER BY`` sorts by code point; FalkorDB gets
  ``KEY + '' > CURSOR``, which the index cannot answer (a label scan per page).
- ``{{node_after VAR CURSOR}}`` and ``{{node_order VAR}}``: paging over a label's nodes in an order each backend
  can seek: Neo4j by the key (``VAR.id``, its range index), FalkorDB by the internal node id (``id(VAR)``: a label
  and id range scan, where the key's page was a label scan: 66 against 13 ms a page of 2,000 of 78k entities,
  and quadratic in the label's size over a whole read). The statement returns ``{{node_order VAR}} AS cursor``;
  the first page starts after ``GraphStore.node_page_start``. For reads that need every node once and not
  their keys' order (the walk index build, title scans).

A statement that cannot be expressed with macros (DDL listings, procedures with different signatures)
lives in ``cypher/<backend>/<name>.cypher``, which overrides the shared file for that backend. A name
that exists for one backend only (``await_indexes`` on Neo4j) is simply not loadable on the other.

File header: ``// @param NAME: TYPE  description`` declares each parameter (TYPE one of INTEGER, FLOAT,
STRING, BOOLEAN, LIST, MAP, VECTOR, ANY); other ``//`` lines document why the statement exists. The
declared parameters must match the ``$names`` used, and callers must pass exactly those.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from neoweave.errors import StatementError
from neoweave.graph_schema.model import SCHEMA
from neoweave.graph_schema.render import BACKENDS, Backend

VECTOR_ORPHAN_SLACK = 50
"""Extra neighbours a FalkorDB vector query asks for beyond 2k, and so the orphan vectors a label may hold before
its index is rebuilt (`{{vector_nodes}}`, `FalkorDBStore.refresh_vector_indexes`)."""
VECTOR_SEARCH_BREADTH = 400
"""Neighbours every vector query asks the index for at least, keeping the best k: the HNSW search breadth (ef).
An index whose vectors were updated in place (FalkorDB re-inserts a node's vector on any update of the node, so
each enrich step that marks its chunks does) loses some true neighbours at the default breadth; searching wider
finds them again (docs/benchmarks/vector_agreement.md)."""
PARAM_TYPES = ("INTEGER", "FLOAT", "STRING", "BOOLEAN", "LIST", "MAP", "VECTOR", "ANY")
_PARAM_LINE = re.compile(r"^//\s*@param\s+([A-Za-z_]\w*)\s*:\s*([A-Z]+)\s*(.*)$")
_MACRO = re.compile(r"\{\{\s*(\w+)((?:\s+[^\s}]+)*)\s*\}\}")
_PARAM_USE = re.compile(r"\$([A-Za-z_]\w*)")
_STRING_OR_COMMENT = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|//[^\n]*|`[^`]*`")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


@dataclass(frozen=True)
class Param:
    name: str
    type: str
    doc: str


@dataclass(frozen=True)
class Statement:
    """A statement rendered for one backend."""

    name: str
    backend: Backend
    text: str
    params: tuple[Param, ...]
    source: str
    doc: str
    exact_text: str | None = None
    """With `{{vector_nodes}}`: the statement with each vector index search replaced by an exact one."""
    vector_labels: tuple[str, ...] = ()
    """The labels those searches read (`exact_text` runs while each is small enough)."""

    @property
    def param_names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.params)

    def check_params(self, params: dict[str, Any]) -> None:
        """Callers pass exactly the declared parameters: a missing or unexpected one is a bug."""
        given = set(params)
        missing = self.param_names - given
        unexpected = given - self.param_names
        if missing or unexpected:
            parts = []
            if missing:
                parts.append(f"missing {sorted(missing)}")
            if unexpected:
                parts.append(f"unexpected {sorted(unexpected)}")
            raise StatementError(f"statement '{self.name}' ({self.source}): " + ", ".join(parts))


def _vector_index_target(index_name: str, statement: str) -> tuple[str, str]:
    try:
        index = SCHEMA.vector_index(index_name)
    except KeyError as exc:
        raise StatementError(f"statement '{statement}': {exc.args[0]}") from None
    return index.label, index.property


def _exact_vector_nodes(backend: Backend, label: str, prop: str, k: str, embedding: str) -> str:
    """`{{vector_nodes}}` as an exact search: every node of the label with a vector, scored like the index's
    search (cosine in [-1, 1]), the best k with the same tie-break."""
    if backend == "falkordb":
        return (f"WITH vecf32({embedding}) AS exact_query_vector MATCH (node:{label}) WHERE node.{prop} IS NOT NULL "
                f"WITH node, 1 - vec.cosineDistance(node.{prop}, exact_query_vector) AS score "
                f"ORDER BY round(score * 1000000) DESC, node.id LIMIT {k}")
    return (f"WITH {embedding} AS exact_query_vector MATCH (node:{label}) WHERE node.{prop} IS NOT NULL "
            f"WITH node, 2 * vector.similarity.cosine(node.{prop}, exact_query_vector) - 1 AS score "
            f"ORDER BY round(score * 1000000) DESC, node.id LIMIT {k}")


def _render_macro(backend: Backend, name: str, args: list[str], statement: str, *, exact: bool = False) -> str:
    def need(count: int) -> None:
        if len(args) != count:
            raise StatementError(f"statement '{statement}': macro {{{{{name}}}}} takes {count} arguments, "
                                 f"got {len(args)}: {args}")

    if name == "vector":
        need(1)
        return f"vecf32({args[0]})" if backend == "falkordb" else args[0]
    if name == "cosine":
        need(2)
        a, b = args
        if any(x.startswith("$") for x in args):
            raise StatementError(f"statement '{statement}': {{{{cosine}}}} of a parameter converts it on every "
                                 f"row; bind it once: WITH {{{{vector $param}}}} AS query_vector")
        if backend == "falkordb":
            return f"(1 - vec.cosineDistance({a}, {b}))"
        return f"(2 * vector.similarity.cosine({a}, {b}) - 1)"
    if name in ("vector_nodes", "indexed_vector_nodes"):
        need(3)
        index, k, embedding = args
        label, prop = _vector_index_target(index, statement)
        if exact and name == "vector_nodes":
            return _exact_vector_nodes(backend, label, prop, k, embedding)
        # Both backends search VECTOR_SEARCH_BREADTH neighbours at least and keep the best k, ties (scores equal
        # to 1e-6) broken by the node's key, so an index grown, updated or rebuilt in any order gives one answer.
        if backend == "falkordb":
            # FalkorDB's HNSW query also returns fewer than k when orphan vectors (FalkorDB#2179: the old vector
            # of every updated or deleted node stays) fill its top k: ask for 2k + VECTOR_ORPHAN_SLACK at least,
            # exact while a label has at most that many orphans (`FalkorDBStore.refresh_vector_indexes`).
            fetch = _at_least(f"2 * {k} + {VECTOR_ORPHAN_SLACK}", VECTOR_SEARCH_BREADTH)
            return (f"CALL db.idx.vector.queryNodes('{label}', '{prop}', {fetch}, vecf32({embedding})) "
                    f"YIELD node, score AS distance WITH *, 1 - distance AS score "
                    f"ORDER BY round(score * 1000000) DESC, node.id LIMIT {k}")
        return (f"CALL db.index.vector.queryNodes('{index}', {_at_least(k, VECTOR_SEARCH_BREADTH)}, {embedding}) "
                f"YIELD node, score AS similarity WITH *, 2 * similarity - 1 AS score "
                f"ORDER BY round(score * 1000000) DESC, node.id LIMIT {k}")
    if name == "fulltext_nodes":
        need(2)
        index, query = args
        try:
            fulltext = SCHEMA.fulltext_index(index)
        except KeyError as exc:
            raise StatementError(f"statement '{statement}': {exc.args[0]}") from None
        if backend == "falkordb":
            return f"CALL db.idx.fulltext.queryNodes('{fulltext.label}', {query}) YIELD node, score"
        return f"CALL db.index.fulltext.queryNodes('{index}', {query}) YIELD node, score"
    if name == "key_after":
        need(2)
        key, cursor = args
        return f"{key} + '' > {cursor}" if backend == "falkordb" else f"{key} > {cursor}"
    if name == "node_after":
        need(2)
        var, cursor = args
        return f"id({var}) > {cursor}" if backend == "falkordb" else f"{var}.id > {cursor}"
    if name == "node_order":
        need(1)
        return f"id({args[0]})" if backend == "falkordb" else f"{args[0]}.id"
    raise StatementError(f"statement '{statement}': unknown macro {{{{{name}}}}}")


def _at_least(expression: str, floor: int) -> str:
    """`expression`, or `floor` when it is smaller (Cypher has no scalar max on both backends)."""
    return f"CASE WHEN {expression} > {floor} THEN {expression} ELSE {floor} END"


def _code_only(text: str) -> str:
    """The statement with string literals, quoted names and comments blanked out."""
    return _STRING_OR_COMMENT.sub(" ", text)


def _parse(name: str, backend: Backend, raw: str, source: str) -> Statement:
    params: list[Param] = []
    doc_lines: list[str] = []
    body_lines: list[str] = []
    for line in raw.splitlines():
        stripped = line.strip()
        match = _PARAM_LINE.match(stripped)
        if match:
            pname, ptype, pdoc = match.groups()
            if ptype not in PARAM_TYPES:
                raise StatementError(f"{source}: parameter {pname} has unknown type {ptype}; "
                                     f"use one of {PARAM_TYPES}")
            params.append(Param(pname, ptype, pdoc.strip()))
        elif stripped.startswith("//") and not body_lines:
            doc_lines.append(stripped.lstrip("/ ").rstrip())
        elif stripped or body_lines:
            body_lines.append(line.rstrip())
    body = "\n".join(body_lines).strip()
    if not body:
        raise StatementError(f"{source}: empty statement")
    rendered = _MACRO.sub(
        lambda m: _render_macro(backend, m.group(1), m.group(2).split(), name), body
    )
    searches = [m.group(2).split() for m in _MACRO.finditer(body) if m.group(1) == "vector_nodes"]
    exact_text = _MACRO.sub(lambda m: _render_macro(backend, m.group(1), m.group(2).split(), name, exact=True),
                            body) if searches else None
    labels = tuple(sorted({_vector_index_target(args[0], name)[0] for args in searches if args}))
    used = set(_PARAM_USE.findall(_code_only(rendered)))
    declared = {p.name for p in params}
    if used != declared:
        raise StatementError(
            f"{source}: declared parameters {sorted(declared)} do not match used {sorted(used)}",
            hint="add or remove '// @param NAME: TYPE' lines",
        )
    return Statement(name, backend, rendered, tuple(params), source, " ".join(doc_lines).strip(), exact_text, labels)


@cache
def _files() -> dict[str | None, dict[str, Any]]:
    root = resources.files("neoweave.cypher")
    found: dict[str | None, dict[str, Any]] = {None: {}}
    for backend in BACKENDS:
        found[backend] = {}
        folder = root / backend
        if folder.is_dir():
            for entry in folder.iterdir():
                if entry.name.endswith(".cypher"):
                    found[backend][entry.name[: -len(".cypher")]] = entry
    for entry in root.iterdir():
        if entry.name.endswith(".cypher"):
            found[None][entry.name[: -len(".cypher")]] = entry
    return found


@cache
def statement_names(backend: Backend | None = None) -> tuple[str, ...]:
    """Statement names available for `backend` (shared plus its own), or every name when None."""
    files = _files()
    names: set[str] = set(files[None])
    for owner, by_name in files.items():
        if backend is None or owner == backend:
            names.update(by_name)
    for name in names:
        if not _NAME.match(name):
            raise StatementError(f"cypher file name {name!r} must be lower_snake_case")
    return tuple(sorted(names))


@cache
def load(name: str, backend: Backend) -> Statement:
    """The statement `name` rendered for `backend` (per-backend file first, then shared)."""
    if backend not in BACKENDS:
        raise StatementError(f"unknown backend {backend!r}")
    files = _files()
    entry = files[backend].get(name) or files[None].get(name)
    if entry is None:
        raise StatementError(f"no Cypher statement named '{name}' for {backend}",
                             hint=f"known: {', '.join(statement_names(backend))}")
    source = f"neoweave/cypher/{backend + '/' if name in files[backend] else ''}{name}.cypher"
    return _parse(name, backend, entry.read_text(encoding="utf-8"), source)


def all_statements(backend: Backend) -> list[Statement]:
    return [load(name, backend) for name in statement_names(backend)]


@cache
def explore_names() -> tuple[str, ...]:
    """The saved Browser queries of `cypher/explore/` (`neoweave cypher --file NAME`, the Browser guide)."""
    folder = resources.files("neoweave.cypher") / "explore"
    return tuple(sorted(e.name[: -len(".cypher")] for e in folder.iterdir() if e.name.endswith(".cypher")))


def explore_query(name: str) -> Statement:
    """A saved exploration query: common Cypher, the same text on both stores (no backend macros)."""
    if name not in explore_names():
        raise StatementError(f"no saved query named '{name}'", hint=f"saved queries: {', '.join(explore_names())}")
    entry = resources.files("neoweave.cypher") / "explore" / f"{name}.cypher"
    return _parse(name, "neo4j", entry.read_text(encoding="utf-8"), f"neoweave/cypher/explore/{name}.cypher")
