"""A deleted document is gone from every answer: after `kb.delete` and the enrich steps run again (as a user brings
the derived layers up to date), no registered strategy returns anything read from it (context items, facts,
community reports, key points, sub-questions, the answer, the trace, the prompt the answer step would send, the
prompts its scripted LLM steps were sent), and the graph holds no trace of it (chunks, entities only it named,
relation evidence, community reports, tags only it carried, RST edges; the saved integrity checks all pass). The same
questions reach it before the delete, so every check can fail. LLM steps are scripted doubles (orchestration only),
as in test_read_only_retrieval. Resolution's merge records still keep a deleted document's chunk ids and text: the
second test states it (expected to fail until they forget it)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conftest import COMMUNITY_CORPUS
from test_community_global import ScriptedAnalyst
from test_iterative import ScriptedPlanner, ScriptedSubQuestions

from neoweave.cypher.registry import explore_query
from neoweave.query import RetrievalResult, get_prompt, render, strategy
from neoweave.registry import STRATEGIES

DELETED = "doc-to-forget"
SENTENCE = "Berengar Quillfeather built the Zephyrine Orrery for Teutberga in 868."
"""A fact only the deleted document states (its second paragraph)."""
MARKERS = (DELETED, "Berengar", "Quillfeather", "Zephyrine", SENTENCE)
"""Strings only the deleted document holds: its id (a prefix of its section and chunk ids), its own entities'
names, its distinctive sentence."""
# Lothair's court (the community corpus) and two made-up courtiers, one of them deleted; each shares Lothair II,
# Aachen and Teutberga with the corpus, and paragraphs (chunks of 200 characters) opening with discourse markers
# give RST edges
RECORDS = [
    *COMMUNITY_CORPUS,
    {"id": DELETED, "title": "Berengar Quillfeather",
     "text": "Berengar Quillfeather was the court astronomer of Lothair II in Aachen.\n\n"
             f"For example, {SENTENCE}\n\n"
             "As a result, the Zephyrine Orrery showed the seven planets turning around Aachen."},
    {"id": "doc-kept", "title": "Odalric Vennemark",
     "text": "Odalric Vennemark was the court physician of Lothair II in Aachen.\n\n"
             "For example, Odalric Vennemark treated Teutberga with willow bark in 867.\n\n"
             "As a result, Odalric Vennemark wrote the Herbarium of Prum."},
]
QUESTIONS = (
    "Who was the court astronomer of Lothair II, and what did he build for Teutberga?",  # names none of it
    "What did Berengar Quillfeather build for Teutberga at the court of Lothair II?",  # names its person
)
PLAN = {"type": "specific", "sub_questions": [
    {"id": 1, "question": "Who was the court astronomer of Lothair II?", "depends_on": []},
    {"id": 2, "question": "What did the court astronomer build for Teutberga?", "depends_on": []}]}
ENRICH = (("kg", {"n_process": 1}), ("communities", {}), ("tags", {}), ("rst", {}))

# every strategy with parameters that need no LLM, or with its scripted LLM (the analyst's key points name the
# words of the reports it was given)
CASES: dict[str, tuple[dict[str, Any], Callable[[], Any] | None]] = {
    "naive": ({}, None),
    "larag": ({}, None),
    "kg": ({}, None),
    "ppr": ({}, None),
    "hybrid": ({}, None),
    "community_local": ({}, None),
    "community_global": ({}, lambda: ScriptedAnalyst({"Quillfeather": 80, "Zephyrine": 70, "Vennemark": 60})),
    "orion": ({"expand": False, "prune": False}, None),
    "khl": ({"analysis": "fast"}, None),
    "recursive": ({}, ScriptedSubQuestions),
    "pank": ({}, lambda: ScriptedPlanner(PLAN)),
    "router": ({}, None),
}


class Recording:
    """An LLM double that records every prompt it is sent and lets the scripted double it wraps answer."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.prompts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def structured(self, messages: list[dict[str, str]], schema: Any, **kwargs: Any) -> Any:
        self.prompts.extend(m["content"] for m in messages)
        return self.inner.structured(messages, schema, **kwargs)

    def chat(self, messages: list[dict[str, str]], **kwargs: Any) -> Any:
        self.prompts.extend(m["content"] for m in messages)
        return self.inner.chat(messages, **kwargs)


def _strings(value: Any) -> Iterator[str]:
    """Every string in plain data, dictionary keys included (trace seeds and scores are keyed by node id)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(key)
            yield from _strings(item)
    elif isinstance(value, list | tuple | set):
        for item in value:
            yield from _strings(item)


def _markers_in(value: Any, markers: tuple[str, ...]) -> list[str]:
    text = "\n".join(_strings(value)).lower()
    return [marker for marker in markers if marker.lower() in text]


def _ask(store: Any, embedder: Any, name: str, question: str) -> tuple[RetrievalResult, list[str]]:
    """The strategy's result for `question`, with the prompts its scripted LLM was sent."""
    parameters, make_llm = CASES[name]
    llm = Recording(make_llm()) if make_llm else None
    result = strategy(name, store, embedder, llm, k=3, **parameters).retrieve(question)
    return result, llm.prompts if llm else []


def _leaks(result: RetrievalResult, prompts: list[str], question: str, chunk_ids: set[str],
           entity_ids: set[str]) -> list[str]:
    """What of the deleted document a result carries: its chunks as context items, fact or sub-question evidence,
    its chunks or entities in the trace, its strings anywhere in the serialized result, in the prompt the answer
    step would send, or in the prompts the strategy's LLM steps were sent. Markers the question itself names are
    not counted (the result and the prompts repeat the question)."""
    markers = tuple(m for m in MARKERS if m.lower() not in question.lower())
    found = [f"item {item.chunk_id}" for item in result.items if item.chunk_id in chunk_ids or item.doc_id == DELETED]
    found += [f"fact {fact.text()}" for fact in result.facts if chunk_ids & set(fact.chunk_ids)]
    found += [f"sub-question {step.id}" for step in result.sub_questions if chunk_ids & set(step.chunk_ids)]
    found += [f"trace node {node}" for node in result.trace.nodes if node in chunk_ids | entity_ids]
    found += [f"{marker!r} in the result" for marker in _markers_in(result.as_dict(), markers)]
    found += [f"{marker!r} in the answer prompt"
              for marker in _markers_in(render(get_prompt("short_answer"), result), markers)]
    found += [f"{marker!r} in an LLM prompt" for marker in _markers_in(prompts, markers)]
    return found


def _graph_traces(store: Any, chunk_ids: set[str], entity_ids: set[str], tags: set[str]) -> dict[str, list[str]]:
    """Where the graph still holds the deleted document, by kind (every list empty once it is gone). Merge records
    (EntityMerge) are left out: see test_merge_records_forget_a_deleted_document."""
    ids = sorted(chunk_ids)
    traces: dict[str, list[str]] = {
        "document, sections, chunks": [row["id"] for row in store.query(
            "MATCH (n) WHERE n.id = $doc OR n.doc_id = $doc OR n.id IN $ids RETURN n.id AS id",
            {"doc": DELETED, "ids": ids})],
        "entities only it named": [row["id"] for row in store.query(
            "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id", {"ids": sorted(entity_ids)})],
        "entity names, aliases, descriptions": [row["id"] for row in store.query(
            "MATCH (e:Entity) RETURN e.id AS id, e.name AS name, e.aliases AS aliases, e.description AS d, "
            "e.description_chunk AS chunk") if row["chunk"] in chunk_ids or _markers_in(row, MARKERS)],
        "relation evidence": [f"{row['a']} -{row['type']}-> {row['b']}" for row in store.query(
            "MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, r.type AS type, b.id AS b, "
            "coalesce(r.chunk_ids, [r.chunk_id]) AS chunk_ids, r.description AS description, "
            "coalesce(r.descriptions, [r.description]) AS descriptions")
            if chunk_ids & set(row["chunk_ids"] or []) or _markers_in(row, MARKERS)],
        "community reports": [row["id"] for row in store.query(
            "MATCH (m:Community) RETURN m.id AS id, m.title AS title, m.summary AS summary, "
            "m.full_report AS full_report, m.findings_json AS findings_json, m.chunk_ids AS chunk_ids")
            if chunk_ids & set(row["chunk_ids"] or []) or _markers_in(row, MARKERS)],
        "tags only it carried": [row["name"] for row in store.query(
            "MATCH (t:Tag) WHERE t.name IN $tags RETURN t.name AS name", {"tags": sorted(tags)})],
        "RST edges": [f"{row['a']} -> {row['b']}" for row in store.query(
            "MATCH (a:Chunk)-[:RST]->(b:Chunk) WHERE a.id IN $ids OR b.id IN $ids RETURN a.id AS a, b.id AS b",
            {"ids": ids})],
        "inferred links": [f"{row['a']} -> {row['b']}" for row in store.query(
            "MATCH (a:Section)-[l:LINKS_TO]->(b:Section) RETURN a.id AS a, b.id AS b, l.chunk_id AS chunk, "
            "l.context AS context, l.text AS text") if row["chunk"] in chunk_ids or _markers_in(row, MARKERS)],
    }
    # and any other string property of any node or relationship
    nodes = store.query("MATCH (n) WHERE NOT n:EntityMerge RETURN labels(n) AS labels, properties(n) AS p")
    edges = store.query("MATCH ()-[r]->() RETURN type(r) AS type, properties(r) AS p")
    traces["any property"] = [f"{row.get('labels') or row['type']}: {_markers_in(row['p'], MARKERS)}"
                              for row in [*nodes, *edges] if _markers_in(row["p"], MARKERS)]
    return traces


def _failing_checks(store: Any) -> dict[str, int]:
    return {row["check"]: row["failing"] for row in store.query(explore_query("integrity_checks").text)
            if row["failing"]}


def _relation_evidence(store: Any) -> dict[tuple[str, str, str], list[str]]:
    rows = store.query("MATCH (a:Entity)-[r:RELATED]->(b:Entity) RETURN a.id AS a, r.type AS type, b.id AS b, "
                       "coalesce(r.chunk_ids, [r.chunk_id]) AS chunk_ids")
    return {(row["a"], row["type"], row["b"]): sorted(row["chunk_ids"] or []) for row in rows}


def _enrich(kb: Any) -> None:
    for step, parameters in ENRICH:
        kb.enrich(step, "fast", **parameters)


def test_a_deleted_document_is_gone_from_every_strategy_and_the_graph(kb, tmp_path: Path):
    assert set(CASES) == set(STRATEGIES.names()), "a new strategy must be added to CASES"
    store, embedder = kb.store, kb.embedder
    corpus = tmp_path / "court.jsonl"
    corpus.write_text("".join(json.dumps(record) + "\n" for record in RECORDS), encoding="utf-8")
    kb.ingest(corpus, chunk_size=200, chunk_overlap=0)
    _enrich(kb)
    assert _failing_checks(store) == {}

    # what the deleted document contributed, read before the delete
    chunk_ids = {row["id"] for row in store.run("document_chunk_ids", {"doc_ids": [DELETED]})}
    entity_ids = {row["id"] for row in store.query(
        "MATCH (e:Entity)<-[:MENTIONS]-(c:Chunk) WITH e, collect(DISTINCT c.doc_id) AS docs WHERE docs = [$doc] "
        "RETURN e.id AS id", {"doc": DELETED})}
    tags = {row["name"] for row in store.query(
        "MATCH (t:Tag)<-[:TAGGED]-(x) WITH t, collect(DISTINCT coalesce(x.doc_id, x.id)) AS owners "
        "WHERE owners = [$doc] RETURN t.name AS name", {"doc": DELETED})}
    assert len(chunk_ids) >= 2 and entity_ids and tags
    shared = {key: ids for key, ids in _relation_evidence(store).items()
              if chunk_ids & set(ids) and set(ids) - chunk_ids}  # relations the kept documents also state
    assert shared, "a relation the deleted document shares with another document"
    before = _graph_traces(store, chunk_ids, entity_ids, tags)
    assert all(before.values()), {kind: found for kind, found in before.items() if not found}

    # the same questions reach it: every strategy returns something read from it, the passage strategies its chunks
    for name in CASES:
        for question in QUESTIONS:
            result, prompts = _ask(store, embedder, name, question)
            assert _leaks(result, prompts, question, chunk_ids, entity_ids), (name, question)
            if STRATEGIES.get(name).returns_passages:
                assert any(item.doc_id == DELETED for item in result.items), (name, question)

    assert kb.delete(DELETED) == [DELETED]
    _enrich(kb)  # the user brings every derived layer up to date

    after = _graph_traces(store, chunk_ids, entity_ids, tags)
    assert not any(after.values()), {kind: found for kind, found in after.items() if found}
    assert _failing_checks(store) == {}
    # only the deleted document's evidence went: what the other documents said stays
    evidence = _relation_evidence(store)
    assert {key: evidence.get(key) for key in shared} == {
        key: sorted(set(ids) - chunk_ids) for key, ids in shared.items()}
    names = {row["name"] for row in store.query("MATCH (e:Entity) RETURN e.name AS name")}
    assert {"Lothair II", "Teutberga", "Aachen", "Odalric Vennemark"} <= names
    assert store.query("MATCH (a:Chunk {doc_id: 'doc-kept'})-[:RST]->(:Chunk) RETURN count(a) AS n")[0]["n"]

    for name in CASES:
        for question in QUESTIONS:
            result, prompts = _ask(store, embedder, name, question)
            assert result.items or result.points or result.reports or result.answer, (name, question)
            assert _leaks(result, prompts, question, chunk_ids, entity_ids) == [], (name, question)


def test_merge_records_forget_a_deleted_document(kb):
    """Resolution's merge records are evidence too: once a document is deleted and `enrich kg` ran again, no
    EntityMerge cites its chunks or keeps its text (the absorbed entity's description, its surface forms)."""
    kb.ingest([*COMMUNITY_CORPUS, RECORDS[-2]], chunk_size=200, chunk_overlap=0)
    kb.enrich("kg", "fast", n_process=1)
    chunk_ids = {row["id"] for row in kb.store.run("document_chunk_ids", {"doc_ids": [DELETED]})}
    stored = "MATCH (m:EntityMerge) RETURN properties(m) AS props"  # what the record itself holds

    def merges() -> list[dict]:  # the records as `neoweave entities merges` reads them, and their own properties
        return kb.store.run("entity_merges", {"ids": []}) + kb.store.query(stored)

    assert any(chunk_ids & set(row.get("chunk_ids") or []) for row in merges())  # it had some

    assert kb.delete(DELETED) == [DELETED]
    kb.enrich("kg", "fast", n_process=1)
    kept = [row for row in merges()
            if chunk_ids & set(row.get("chunk_ids") or []) or _markers_in(row, MARKERS) or chunk_ids & set(
                (row.get("props") or {}).get("chunk_ids") or [])]
    assert kept == []
