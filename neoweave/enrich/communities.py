"""The `communities` enrich step: hierarchical Leiden over the entity graph, then a report per community.

Graph-wide (it reads the entity graph `enrich kg` built, not chunks). A run:
1. reads every RELATED edge and fingerprints the graph with the detection parameters; when the fingerprint
   is the one stored with the communities and every community still holds its leaf members, the partition stands
   (Leiden is deterministic: same graph, same seed, same communities; an entity deleted and written again, as a
   document deleted and ingested again leaves it, has lost its membership edge and gets it back);
2. otherwise runs hierarchical Leiden and writes the new partition in one unit: communities that no longer
   exist are deleted, new ones created with their leaf IN_COMMUNITY edges and PARENT_COMMUNITY links (an id is
   level + members, so a kept id has the same members; its leaf members, the entities whose deepest community it
   is, are set again: they change with its sub-communities), the fingerprint recorded;
3. writes a report for every community whose report inputs (members, internal relations, method) changed, or
   one of whose member entities changed since the report was written (recorded by the kg writes in the state
   node's `members_changed`: mentions or relation evidence written or forgotten, merges, unmerges, deletions;
   removed with the report written) or which cites a deleted chunk, leaves first, a unit per batch: killed at any
   point, the next run redoes only what is missing. Until then retrieval withdraws such a report (never serves
   stale text) and `neoweave check` names this step as the repair.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from tqdm import tqdm

from neoweave.enrich.base import EnrichReport, EnrichStep, StepContext, phase
from neoweave.enrich.community_reports import (
    FAST_RATING,
    FastReporter,
    MemberEntity,
    MemberRelation,
    Report,
    ReportContext,
    SourceChunk,
    centroid,
    report_row,
)
from neoweave.enrich.community_reports_llm import ChildReport, LLMReporter
from neoweave.enrich.leiden import Community, Edge, detect, entity_edges, graph_fingerprint
from neoweave.errors import NeoweaveError
from neoweave.registry import register_step
from neoweave.store.base import GraphStore
from neoweave.store.values import batched, now_iso

log = logging.getLogger(__name__)

STATE_ID = "communities"
_MAX_RELATION_CHUNKS = 3


@register_step
@dataclass
class CommunitiesStep(EnrichStep):
    name: ClassVar[str] = "communities"
    methods: ClassVar[tuple[str, ...]] = ("fast", "llm")
    vector_labels: ClassVar[tuple[str, ...]] = ("Community",)
    writes: ClassVar[frozenset[str] | None] = frozenset({"Community", "IN_COMMUNITY", "PARENT_COMMUNITY", "Meta"})
    graph_wide: ClassVar[bool] = True

    max_cluster_size: int = 10
    """Communities larger than this are split again one level down (microsoft/graphrag's default)."""
    seed: int = 0xDEADBEEF
    """Leiden's random seed (graphrag's default): with the same graph, the same communities."""
    resolution: float = 1.0
    """Modularity resolution: higher gives more, smaller communities."""
    min_size: int = 3
    """Smaller communities are not kept (a pair is one relation, not a topic; isolated entities are in none)."""
    report_chunks: int = 8
    """Source chunks considered per report (those mentioning the most members)."""
    summary_sentences: int = 3
    """fast: sentences in a report's summary."""
    findings: int = 5
    """fast: strongest relations listed as findings."""
    reports_per_unit: int | None = None
    """Reports written per unit, a killed run loses at most this many (None: 64 fast, 8 llm)."""
    llm_context_tokens: int = 1500
    """llm: input budget of one report (graphrag: 8,000 for large models; the local 1.5B has a 4,096 window)."""
    llm_max_tokens: int = 600
    """llm: completion cap of one report."""

    def validate(self) -> None:
        super().validate()
        self._at_least(1, "max_cluster_size", "min_size", "report_chunks", "llm_context_tokens", "llm_max_tokens")
        if self.reports_per_unit is not None:
            self._at_least(1, "reports_per_unit")
        if self.resolution <= 0:
            raise NeoweaveError(f"enrich communities: resolution must be > 0, got {self.resolution}")

    def detection_parameters(self) -> dict[str, Any]:
        return {"max_cluster_size": self.max_cluster_size, "seed": self.seed, "resolution": self.resolution,
                "min_size": self.min_size}

    def report_parameters(self) -> dict[str, Any]:
        parameters: dict[str, Any] = {"report_chunks": self.report_chunks,
                                      "summary_sentences": self.summary_sentences, "findings": self.findings}
        if self.method == "fast":  # llm reports rate themselves: a new fast scale must not rewrite them
            parameters["rating"] = FAST_RATING
        return parameters

    def touched_vector_labels(self, report: EnrichReport) -> tuple[str, ...]:
        return self.vector_labels if report.counters.get("reports_written") else ()

    def finish(self, ctx: StepContext, report: EnrichReport) -> None:
        store = ctx.store
        with phase(report, "leiden"):
            edges = entity_edges(store.run("community_entity_graph"))
            fingerprint = graph_fingerprint(edges, self.detection_parameters())
            communities = detect(edges, **self.detection_parameters())
        report.counters["entities_in_graph"] = len({node for a, b, _ in edges for node in (a, b)})
        report.counters["communities"] = len(communities)
        state = store.run("community_state_get", {"id": STATE_ID})
        existing = {row["id"]: row for row in store.run("community_list")}
        if not state or state[0]["fingerprint"] != fingerprint or set(existing) != {c.id for c in communities} \
                or any(existing[c.id]["leaf_members"] != len(c.leaf_members) for c in communities):
            with phase(report, "write_partition"):
                self._write_partition(store, communities, existing, fingerprint, report)
            existing = {row["id"]: row for row in store.run("community_list")}
        with phase(report, "reports"):
            self._write_reports(ctx, communities, edges, existing, report)
        for row in store.run("community_levels"):
            level = int(row["level"])
            report.counters[f"level_{level}_communities"] = int(row["communities"])
            report.counters[f"level_{level}_max_size"] = int(row["max_size"])

    # the partition ----------------------------------------------------------------------------------
    def _write_partition(self, store: GraphStore, communities: list[Community], existing: dict[str, Any],
                         fingerprint: str, report: EnrichReport) -> None:
        new_ids = {c.id for c in communities}
        stale = sorted(set(existing) - new_ids)
        created = [c for c in communities if c.id not in existing]
        source = f"{self.prefix}{self.version}:{self.method}"
        with store.unit() as unit:
            for ids in batched(stale, store.batch_size):
                unit.run("community_delete", {"ids": ids})
            unit.run("community_clear_changed", {"ids": stale})
            unit.run_batches("community_upsert", [
                {"id": c.id, "level": c.level, "size": c.size, "children": len(c.children)} for c in communities],
                {"method": self.method, "source": source, "now": now_iso()})
            # a kept community keeps its members, not always its leaf members (its sub-communities may have
            # changed): its edges are set again, those of entities now in a sub-community (or above) dropped
            unit.run_batches("community_drop_members", [
                {"community_id": c.id, "entity_ids": list(c.leaf_members)} for c in communities if c.id in existing])
            unit.run_batches("community_add_members", [
                {"community_id": c.id, "entity_id": entity, "level": c.level}
                for c in communities for entity in c.leaf_members])
            unit.run_batches("community_set_parents", [
                {"id": c.id, "parent_id": c.parent_id} for c in communities if c.parent_id])
            unit.run("community_state_set", {"id": STATE_ID, "fingerprint": fingerprint, "now": now_iso()})
        report.count("communities_deleted", len(stale))
        report.count("communities_created", len(created))

    # the reports ------------------------------------------------------------------------------------
    def _write_reports(self, ctx: StepContext, communities: list[Community], edges: list[Edge],
                       existing: dict[str, Any], report: EnrichReport) -> None:
        internal = _internal_edges(communities, edges)
        llm_reporter = self.llm_reporter(ctx) if self.method == "llm" else None
        model = f":{llm_reporter.model_name}" if llm_reporter else ""
        signature = f"{self.prefix}{self.version}:{self.method}{model}:{sorted(self.report_parameters().items())}"
        wanted = {c.id: _report_fingerprint(signature, c, internal[c.id]) for c in communities}
        # a report is rewritten when its inputs changed, when a member changed since it was written (a merge, a
        # deletion, mentions added or forgotten: recorded by the kg writes, `community_mark_changed_*`) or when it
        # cites a chunk that is gone
        state = ctx.store.run("community_state_get", {"id": STATE_ID})
        changed = set(state[0]["members_changed"]) if state else set()
        changed |= {cid for cid, row in existing.items() if row.get("cites_deleted")}  # withdrawn by retrieval too
        pending = [c for c in communities if (existing.get(c.id) or {}).get("report_fingerprint") != wanted[c.id]
                   or c.id in changed]
        report.counters["reports_kept"] = len(communities) - len(pending)
        if not pending:
            return
        entities = {row["id"]: row for row in ctx.store.run("community_report_entities", {
            "entity_ids": sorted({e for c in pending for e in c.members})})}
        fast = FastReporter(self.summary_sentences, findings=self.findings)
        sources = {"fast": f"{self.prefix}{self.version}:fast", "llm": f"{self.prefix}{self.version}:llm{model}"}
        by_id = {c.id: c for c in communities}
        per_unit = self.reports_per_unit or (8 if llm_reporter else 64)
        bar = tqdm(total=len(pending), desc=f"community reports ({self.method})", unit="report",
                   disable=not ctx.progress)
        for level in sorted({c.level for c in pending}, reverse=True):  # leaves first: parents read their reports
            started = time.perf_counter()
            at_level = sorted((c for c in pending if c.level == level), key=lambda c: c.id)
            for start in range(0, len(at_level), per_unit):
                batch = at_level[start:start + per_unit]
                contexts = self._contexts(ctx.store, batch, entities)

                def fallback(context: ReportContext) -> Report:
                    return fast.report(context)

                if llm_reporter:
                    reports, fingerprints, methods = self._llm_reports(ctx, llm_reporter, batch, contexts, by_id,
                                                                       fallback, wanted, report)
                else:
                    reports = [fallback(contexts[c.id]) for c in batch]
                    fingerprints, methods = [wanted[c.id] for c in batch], [self.method] * len(batch)
                texts = [r.full_report(contexts[c.id]) for c, r in zip(batch, reports, strict=True)]
                vectors = self._report_vectors(ctx, batch, reports, methods, contexts)
                counts = ctx.embedder.count_tokens(texts) if ctx.embedder else [None] * len(texts)
                rows = [report_row(c, r, fingerprint, v, text, count, method, sources[method])
                        for c, r, fingerprint, v, text, count, method
                        in zip(batch, reports, fingerprints, vectors, texts, counts, methods, strict=True)]
                with ctx.store.unit() as unit:
                    unit.run_batches("community_set_reports", rows)
                    unit.run("community_clear_changed", {"ids": [c.id for c in batch]})
                report.count("reports_written", len(rows))
                report.count(f"level_{level}_reports_written", len(rows))
                bar.update(len(rows))
            report.phase_seconds[f"reports_level_{level}"] = round(time.perf_counter() - started, 3)
        bar.close()

    def llm_reporter(self, ctx: StepContext) -> LLMReporter:
        return LLMReporter(ctx.llm, context_tokens=self.llm_context_tokens, max_tokens=self.llm_max_tokens)

    def _llm_reports(self, ctx: StepContext, reporter: LLMReporter, batch: list[Community],
                     contexts: dict[str, ReportContext], by_id: dict[str, Community],
                     fallback: Callable[[ReportContext], Report], wanted: dict[str, str], report: EnrichReport,
                     ) -> tuple[list[Report], list[str], list[str]]:
        """Reports from the model; one it failed on is the fast report, marked so the next run asks again."""
        child_ids = sorted({child for c in batch for child in c.children})
        stored = {row["id"]: row for row in ctx.store.run("community_child_reports", {"ids": child_ids})}
        children = {c.id: [_child_report(stored[child], by_id[child]) for child in c.children if child in stored]
                    for c in batch}
        results = reporter.reports([contexts[c.id] for c in batch], children, fallback)
        reports, fingerprints, methods = [], [], []
        for community, result in zip(batch, results, strict=True):
            level = community.level
            # built from a sub-report that was itself a fallback: rebuilt once that child has its llm report
            stale_input = any((stored[child].get("report_fingerprint") or "").endswith("+fallback")
                              for child in result.prompt.children_used)
            report.llm_calls += result.calls
            report.prompt_tokens += result.prompt_tokens
            report.completion_tokens += result.completion_tokens
            report.count(f"level_{level}_llm_calls", result.calls)
            report.count(f"level_{level}_prompt_tokens", result.prompt_tokens)
            report.count(f"level_{level}_completion_tokens", result.completion_tokens)
            if result.prompt.children_used:
                report.count("reports_from_sub_reports")
            if result.error:
                report.count("llm_fallbacks")
                report.failures.append(f"{community.id}: {result.error}")
                fingerprints.append(wanted[community.id] + "+fallback")  # never matches: asked again next run
                methods.append("fast")
            else:
                fingerprints.append(wanted[community.id] + ("+fallback" if stale_input else ""))
                methods.append("llm")
            reports.append(result.report)
        return reports, fingerprints, methods

    @staticmethod
    def _report_vectors(ctx: StepContext, batch: list[Community], reports: list[Report], methods: list[str],
                        contexts: dict[str, ReportContext]) -> list[list[float] | None]:
        """An llm report's own text is embedded (it says what the model made of the community, one MiniLM call
        per report beside a multi-second LLM call); a fast report takes the centroid of its chunks."""
        written = [i for i, method in enumerate(methods) if method == "llm"] if ctx.embedder else []
        vectors = [None if i in written else centroid([chunk for chunk in contexts[c.id].chunks
                                                       if chunk.id in r.chunk_ids])
                   for i, (c, r) in enumerate(zip(batch, reports, strict=True))]
        if written:
            embedded = ctx.embedder.embed([f"{reports[i].title}\n{reports[i].summary}" for i in written])
            for index, vector in zip(written, embedded, strict=True):
                vectors[index] = vector
        return vectors

    def _contexts(self, store: GraphStore, batch: list[Community], entities: dict[str, dict[str, Any]]
                  ) -> dict[str, ReportContext]:
        """Members, internal relations and top chunks of a batch of communities: two statements."""
        member_ids = sorted({e for c in batch for e in c.members})
        relations = store.run("community_report_relations", {"entity_ids": member_ids,
                                                             "max_chunks": _MAX_RELATION_CHUNKS})
        chunks: dict[str, list[SourceChunk]] = defaultdict(list)
        for row in store.run("community_report_chunks", {
                "rows": [{"community_id": c.id, "entity_ids": list(c.members)} for c in batch],
                "per_community": self.report_chunks}):
            chunks[row["community_id"]].append(SourceChunk(row["chunk_id"], row["text"] or "",
                                                           row["embedding"], int(row["members"])))
        outgoing: dict[str, list[tuple[int, dict[str, Any]]]] = defaultdict(list)
        for index, row in enumerate(relations):  # by source, so a community reads its members' rows only
            outgoing[row["source_id"]].append((index, row))
        contexts = {}
        for community in batch:
            members = set(community.members)
            inside = sorted((pair for e in community.members for pair in outgoing.get(e, ())
                             if pair[1]["target_id"] in members), key=lambda pair: pair[0])
            contexts[community.id] = ReportContext(
                community,
                [_member(e, entities.get(e, {})) for e in community.members],
                [MemberRelation(r["source_id"], r["target_id"], r["type"] or "related", r["description"] or "",
                                float(r["weight"] or 1.0), list(r["chunk_ids"] or [])) for _, r in inside],
                chunks.get(community.id, []))
        return contexts


def _child_report(row: dict[str, Any], child: Community) -> ChildReport:
    findings = [f.get("summary", "") for f in json.loads(row["findings_json"] or "[]") if isinstance(f, dict)]
    return ChildReport(child.id, row["title"] or child.id, row["summary"] or "", [f for f in findings if f],
                       child.members)


def _member(entity_id: str, row: dict[str, Any]) -> MemberEntity:
    return MemberEntity(entity_id, row.get("name") or entity_id, row.get("type") or "", row.get("description") or "",
                        int(row.get("mentions") or 0))


def _internal_edges(communities: list[Community], edges: list[Edge]) -> dict[str, list[Edge]]:
    """Each community's edges with both ends inside it."""
    incident: dict[str, list[Edge]] = defaultdict(list)
    for edge in edges:
        incident[edge[0]].append(edge)
    found: dict[str, list[Edge]] = {}
    for community in communities:
        members = set(community.members)
        found[community.id] = [edge for node in community.members for edge in incident.get(node, ())
                               if edge[1] in members]
    return found


def _report_fingerprint(signature: str, community: Community, internal: list[Edge]) -> str:
    """A report is rebuilt when its community's members (the id), internal relations or method change."""
    digest = hashlib.sha1(f"{signature}\n{community.id}\n".encode())
    for a, b, w in sorted(internal):
        digest.update(f"{a}\t{b}\t{w:.6g}\n".encode())
    return digest.hexdigest()
