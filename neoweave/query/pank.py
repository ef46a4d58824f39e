"""PankRAG (globally-aware query resolution and dependency-aware reranking) on the stored graph.

1. Plan: the model splits the question into a DAG of sub-questions (parallel ones without dependencies,
   sequential ones depending on earlier answers) and says whether the question is specific or abstract. The
   plan is checked and repaired (`pank_plan.build_plan`: no cycle, no unknown id, at most `max_sub_questions`).
2. Resolve level by level: the sub-questions of one level run concurrently (within the gateway's concurrency).
   A sub-question with dependencies is first rewritten with the answers it depends on (disambiguation), then
   retrieved for: specific questions by `local_strategy`, abstract ones by `global_strategy` (`auto`: ppr when
   the graph has entities, else naive; community_global when it has communities, else the local one).
3. Dependency-aware reranking of a dependent sub-question's `candidates` chunks:
   score = alpha * cos(chunk, sub-question) + beta * cos(chunk, the resolved dependencies' questions and
   answers), with (alpha, beta) = (0.6, 0.4) for specific and (0.75, 0.25) for abstract questions (the
   paper's values); an independent sub-question keeps its chunks by cos(chunk, sub-question). Best `k` kept.
4. Each sub-question is answered from its context; the final answer prompt shows the sub-questions with their
   answers and every sub-question's best chunks (`final_k`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.llm.gateway import each_in_flight
from neoweave.query import pank_plan
from neoweave.query.base import (
    ContextItem,
    Cost,
    Fact,
    KeyPoint,
    ReportItem,
    RetrievalResult,
    Strategy,
    SubQuestion,
    Trace,
    register,
)
from neoweave.query.community_global import LEVEL_CHOICES
from neoweave.query.iterative import (
    absorb,
    answer_sub_question,
    merged_context,
    sub_retriever,
)
from neoweave.query.ranking import best_first

log = logging.getLogger(__name__)


@dataclass
class _Resolved:
    step: SubQuestion
    items: list[ContextItem]
    sub: RetrievalResult | None
    trace: Trace = field(default_factory=Trace)
    cost: Cost = field(default_factory=Cost)


@register
@dataclass
class PankRAG(Strategy):
    name = "pank"
    reads_link_contexts: ClassVar[bool] = True
    needs_llm: ClassVar[bool] = True
    paper: ClassVar[dict[str, Any] | None] = {
        "local_strategy": "community_local", "global_strategy": "community_global", "intrinsic": "retriever",
        "rerank_independent": False, "alpha_specific": 0.6, "beta_specific": 0.4, "disambiguate": True,
        "global_level_choice": "leaf_or_top"}
    paper_source: ClassVar[str] = "PankRAG, 004 l. 88-116 (plan, GraphRAG local and global search, leaf or " \
        "high-level summaries, reranking), l. 207-209 (alpha:beta = 0.6:0.4)"

    max_sub_questions: int = 4
    """Sub-questions in a plan at most (a longer plan is cut, the cut recorded)."""
    k: int = 5
    """Chunks kept per sub-question after reranking."""
    candidates: int = 10
    """Chunks retrieved per sub-question before the dependency-aware reranking."""
    question_type: str = "auto"
    """specific | abstract | auto (the planner says)."""
    local_strategy: str = "auto"
    """Retriever of specific questions' sub-questions (auto: ppr, the entity graph walk, when the graph has
    entities, else naive)."""
    global_strategy: str = "auto"
    """Retriever of abstract questions' sub-questions (auto: community_global when the graph has communities,
    else the local one)."""
    global_level_choice: str = "fixed"
    """community_global's `level_choice` when it retrieves for abstract questions: fixed (its `level`, 0) or
    leaf_or_top (the paper's choice between leaf-level and high-level summaries, l. 108, per sub-question)."""
    alpha_specific: float = 0.6
    beta_specific: float = 0.4
    alpha_abstract: float = 0.75
    beta_abstract: float = 0.25
    disambiguate: bool = False
    """The paper's top-down phase (004 l. 96-98): one call first rephrases an ambiguous or polysemous question into
    logically partitioned formulations (SubQ0.x), which the planner then splits; off by default (one more call a
    question, and the planner already sees the whole question)."""
    intrinsic: str = "similarity"
    """R_i, the reranking's intrinsic score of a chunk: similarity (its cosine to the sub-question: one scale
    whatever the retriever) or retriever (the score the sub-retriever gave it, as the paper does, l. 114)."""
    rerank_independent: bool = True
    """Rerank the sub-questions without dependencies too (by R_i alone); the paper keeps their retrieval as it
    came (l. 112: "if no dependencies are present, the generation proceeds without reranking")."""
    final_k: int = 10
    """Chunks given to the answer prompt, every sub-question's best first (0 = all kept)."""
    final_facts: int = 10
    """Entity relations given to the answer prompt at most (kg sub-retrievals), best first."""
    plan_max_tokens: int = 400
    rewrite_max_tokens: int = 80
    answer_max_tokens: int = 48

    def validate(self) -> None:
        self._at_least(1, "max_sub_questions", "k", "candidates", "plan_max_tokens", "rewrite_max_tokens",
                       "answer_max_tokens")
        self._at_least(0, "alpha_specific", "beta_specific", "alpha_abstract", "beta_abstract", "final_k",
                       "final_facts")
        if self.intrinsic not in ("similarity", "retriever"):
            raise NeoweaveError(f"pank: intrinsic must be similarity or retriever, got {self.intrinsic!r}")
        if self.global_level_choice not in LEVEL_CHOICES:
            raise NeoweaveError(f"pank: global_level_choice must be one of {', '.join(LEVEL_CHOICES)}, "
                                f"got {self.global_level_choice!r}")
        if self.question_type not in ("auto", "specific", "abstract"):
            raise NeoweaveError(f"pank: question_type must be auto, specific or abstract, got {self.question_type!r}")
        if self.llm is None:
            raise NeoweaveError("pank: needs an LLM to plan and answer sub-questions", hint="configure [llm]")

    @cached_property
    def _layers(self) -> dict[str, bool]:
        present = {row["layer"] for row in self.store.run("graph_layers", {})}
        return {layer: layer in present for layer in ("entities", "communities", "tags")}

    def retriever_for(self, kind: str) -> str:
        """The strategy that retrieves for a sub-question of a `kind` (specific / abstract) question."""
        local = self.local_strategy if self.local_strategy != "auto" else \
            ("ppr" if self._layers["entities"] else "naive")
        if kind == "specific":
            return local
        if self.global_strategy != "auto":
            return self.global_strategy
        return "community_global" if self._layers["communities"] else local

    def weights(self, kind: str) -> tuple[float, float]:
        return (self.alpha_abstract, self.beta_abstract) if kind == "abstract" else \
            (self.alpha_specific, self.beta_specific)

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        plan = self._plan(question, cost, result)
        retriever = sub_retriever(self, self.retriever_for(plan.type), k=self.candidates,
                                  level_choice=self.global_level_choice)
        resolved: dict[str, _Resolved] = {}
        for level in plan.levels():
            done = each_in_flight(self.llm, lambda node: self._resolve(question, node, plan.type, retriever,
                                                                       resolved), level)
            for node, outcome in zip(level, done, strict=True):  # folded in plan order: deterministic traces
                resolved[node.id] = outcome
                absorb(trace, cost, RetrievalResult(question, self.name, {}, [], outcome.trace, outcome.cost))
        steps = [resolved[node.id].step for node in plan.nodes]
        result.sub_questions = steps
        result.parameters.update(plan=pank_plan.plan_as_dict(plan), question_kind=plan.type,
                                 sub_retriever=retriever.name, weights=list(self.weights(plan.type)))
        self._carry_other_context(result, [resolved[node.id].sub for node in plan.nodes])
        items = merged_context(steps, {node.id: resolved[node.id].items for node in plan.nodes}, self.final_k)
        for item in items:
            trace.chunk(item.section_id, item.chunk_id)
        return items

    # stages -----------------------------------------------------------------------------------------
    def _plan(self, question: str, cost: Cost, result: RetrievalResult) -> pank_plan.CheckedPlan:
        planned = question
        if self.disambiguate:
            with cost.timed("plan"):
                read = self.llm.structured(pank_plan.disambiguate_messages(question), pank_plan.Disambiguated,
                                           stage=pank_plan.DISAMBIGUATE_STAGE, max_tokens=self.plan_max_tokens)
            cost.count_calls(read.calls, read.ok)
            planned = pank_plan.disambiguated_question(question, read.value if read.ok else None)
            result.parameters["disambiguation"] = {
                "ambiguous": planned != question, "formulations": read.value.formulations if read.ok else [],
                "error": read.error}
        with cost.timed("plan"):
            reply = self.llm.structured(pank_plan.plan_messages(planned, self.max_sub_questions), pank_plan.Plan,
                                        stage=pank_plan.PLAN_STAGE, max_tokens=self.plan_max_tokens)
        cost.count_calls(reply.calls, reply.ok)
        if not reply.ok:
            log.warning("pank: planning failed (%s); the question is answered as one sub-question", reply.error)
        plan = pank_plan.build_plan(question, reply.value if reply.ok else None, self.max_sub_questions,
                                    self.question_type)
        if plan.repairs:
            log.info("pank: plan repaired: %s", "; ".join(plan.repairs))
        return plan

    def _resolve(self, question: str, node: pank_plan.PlanNode, kind: str, retriever: Strategy,
                 resolved: dict[str, _Resolved]) -> _Resolved:
        """Rewrite (when it depends on answers), retrieve, rerank and answer one sub-question."""
        deps = [resolved[dep].step for dep in node.depends_on]
        step = SubQuestion(node.id, node.question, depends_on=list(node.depends_on), asked=node.question,
                           strategy=retriever.name, round=node.level)
        outcome = _Resolved(step, [], None)
        cost = outcome.cost
        if deps:
            step.asked = self._rewrite(node.question, deps, cost)
        sub = retriever.retrieve(step.asked)
        absorb(outcome.trace, cost, sub)
        outcome.sub = sub
        outcome.items = self._rerank(step, sub.items, deps, kind, outcome.trace, cost)
        sub.items = outcome.items
        step.chunk_ids = [item.chunk_id for item in outcome.items]
        with cost.timed("sub_answer"):
            step.answer, call = answer_sub_question(self.llm, step.asked, sub, self.answer_max_tokens)
        cost.count_calls([call] if call is not None else [], ok=call is not None)
        return outcome

    def _rewrite(self, sub_question: str, deps: list[SubQuestion], cost: Cost) -> str:
        known = [(dep.id, dep.asked, dep.answer) for dep in deps if dep.answer]
        if not known:
            return sub_question
        with cost.timed("rewrite"):
            reply = self.llm.structured(pank_plan.rewrite_messages(sub_question, known), pank_plan.Rewritten,
                                        stage=pank_plan.REWRITE_STAGE, max_tokens=self.rewrite_max_tokens)
        cost.count_calls(reply.calls, reply.ok)
        rewritten = " ".join(reply.value.question.split()) if reply.ok else ""
        if not rewritten:  # the answers go along as words: retrieval still sees the resolved names
            return f"{sub_question} ({'; '.join(answer for _, _, answer in known)})"
        return rewritten

    def _rerank(self, step: SubQuestion, items: list[ContextItem], deps: list[SubQuestion], kind: str,
                trace: Trace, cost: Cost) -> list[ContextItem]:
        """alpha * R_i + beta * cos(chunk, resolved dependencies), the best k; R_i is the chunk's cosine to the
        sub-question, or the retriever's score (`intrinsic`). Without dependencies and `rerank_independent`
        off, the retriever's first k as they came."""
        if not items:
            return []
        if not deps and not self.rerank_independent:
            return items[:self.k]
        alpha, beta = self.weights(kind)
        resolved = " ".join(f"{dep.asked} {dep.answer}" for dep in deps if dep.answer)
        texts = [step.asked, resolved] if resolved else [step.asked]
        with cost.timed("embed"):
            vectors = self.embedder.embed(texts)
        ids = [item.chunk_id for item in items]
        with cost.timed("rerank"):
            relevance = self._similarities(ids, vectors[0], trace) if self.intrinsic == "similarity" else \
                {item.chunk_id: item.score for item in items}
            dependency = self._similarities(ids, vectors[1], trace) if resolved else {}
        for item in items:
            r, d = relevance.get(item.chunk_id, 0.0), dependency.get(item.chunk_id)
            score = alpha * r + beta * d if d is not None else r
            item.details["rerank"] = {"relevance": r, "dependency": d, "alpha": alpha, "beta": beta,
                                      "retriever_score": item.score, "score": score}
            item.score = score
        return sorted(items, key=lambda item: best_first(item.score, item.chunk_id))[:self.k]

    def _similarities(self, ids: list[str], vector: list[float], trace: Trace) -> dict[str, float]:
        rows = self._run(trace, "chunk_similarities", {"ids": ids, "embedding": vector})
        return {row["chunk_id"]: float(row["semantic"]) for row in rows}

    def _carry_other_context(self, result: RetrievalResult, subs: list[RetrievalResult | None]) -> None:
        """Facts (best `final_facts`), reports and key points the sub-retrievals gave, each once."""
        facts: dict[tuple[str, str, str], Fact] = {}
        reports: dict[str, ReportItem] = {}
        points: dict[str, KeyPoint] = {}
        for sub in subs:
            if sub is None:
                continue
            for fact in sub.facts:
                facts.setdefault((fact.source_id, fact.relation, fact.target_id), fact)
            for report in sub.reports:
                reports.setdefault(report.community_id, report)
            for point in sub.points:
                points.setdefault(point.text, point)
        result.facts = sorted(facts.values(), key=lambda fact: best_first(
            fact.score, fact.source_id, fact.relation, fact.target_id))[:self.final_facts]
        result.reports = list(reports.values())
        result.points = sorted(points.values(), key=lambda point: (-point.score, point.text))
