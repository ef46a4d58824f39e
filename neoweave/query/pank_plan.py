"""PankRAG's globally-aware plan: the question as a DAG of sub-questions, checked and repaired before it runs.

The planner (an LLM call) answers sub-questions with ids and the ids each depends on. A plan from a small model
can be malformed: ids twice, dependencies on ids that do not exist or on the sub-question itself, cycles, too
many sub-questions, none at all. `build_plan` repairs every one of these deterministically and says what it
changed, so a plan always runs and never hangs: a dependency is kept only when it points to a sub-question the
plan lists earlier whenever a cycle would otherwise remain.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, Field

PLAN_STAGE = "pank:plan"
REWRITE_STAGE = "pank:rewrite"
PLAN_SYSTEM = """You plan how to answer a question from a document collection.
Split the question into the fewest sub-questions whose answers together answer it, at most {limit}; the last
one answers the question itself. A simple question is a single sub-question: the question itself. Give each
sub-question an id (1, 2, ...). When a sub-question needs the answer of another one, list that id in its
depends_on and write it so it names what it needs ("the film from step 1"). Sub-questions that do not need
each other have no dependency and are answered in parallel.
Also say the question's type: "specific" when it asks about particular entities or facts, "abstract" when it
asks about themes, summaries or overall trends of the collection.
Example: "Who directed the film that was shot in Leland in 1986?" ->
{{"type": "specific", "sub_questions": [{{"id": 1, "question": "Which film was shot in Leland in 1986?",
"depends_on": []}}, {{"id": 2, "question": "Who directed the film from step 1?", "depends_on": [1]}}]}}
Example: "Are Nolan and Kalathil both film directors?" ->
{{"type": "specific", "sub_questions": [{{"id": 1, "question": "What is Nolan's occupation?", "depends_on": []}},
{{"id": 2, "question": "What is Kalathil's occupation?", "depends_on": []}}, {{"id": 3, "question": "Are Nolan
and Kalathil both film directors?", "depends_on": [1, 2]}}]}}
Answer with a JSON object only."""
DISAMBIGUATE_STAGE = "pank:disambiguate"
DISAMBIGUATE_SYSTEM = """You read a question before it is split into sub-questions.
If it contains an explicit ambiguity or a polysemous expression (a name several things share, a word with
several readings, a reference that could point to more than one thing), rephrase it into logically partitioned
formulations: one clear question for each reading the question can have, each naming what it is about. If the
question is clear, say it is not ambiguous and give no formulation.
Answer with a JSON object only: {"ambiguous": true, "formulations": ["...", "..."]}"""
REWRITE_SYSTEM = """You rewrite a sub-question so it stands on its own, replacing every reference to an earlier
step ("the composer from step 1", "that city", "he") with the answer that step found. Change nothing else.
Answer with a JSON object only: {"question": "..."}"""


class PlannedQuestion(BaseModel):
    id: int | str
    question: str
    depends_on: list[int | str] = Field(default_factory=list)


class Plan(BaseModel):
    type: str = "specific"
    sub_questions: list[PlannedQuestion] = Field(default_factory=list)


class Rewritten(BaseModel):
    question: str


class Disambiguated(BaseModel):
    ambiguous: bool = False
    formulations: list[str] = Field(default_factory=list)


def disambiguate_messages(question: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": DISAMBIGUATE_SYSTEM}, {"role": "user", "content": f"Question: {question}"}]


def disambiguated_question(question: str, reply: Disambiguated | None) -> str:
    """What the planner plans: the question, with its formulations when the top-down phase found it ambiguous
    (PankRAG's SubQ0.x, 004 l. 97-98)."""
    formulations = [" ".join(f.split()) for f in (reply.formulations if reply and reply.ambiguous else []) if f.strip()]
    if not formulations:
        return question
    return question + "\nIt can be read as: " + " | ".join(formulations)


@dataclass
class PlanNode:
    id: str
    question: str
    depends_on: list[str] = field(default_factory=list)
    level: int = 0


@dataclass
class CheckedPlan:
    type: Literal["specific", "abstract"]
    nodes: list[PlanNode]
    repairs: list[str] = field(default_factory=list)
    """What was changed in the model's plan to make it a DAG that runs (empty for a well-formed plan)."""

    def levels(self) -> list[list[PlanNode]]:
        """Nodes grouped by level: every node's dependencies are in earlier levels (run a level concurrently)."""
        depth = max((node.level for node in self.nodes), default=-1) + 1
        return [[node for node in self.nodes if node.level == level] for level in range(depth)]


def plan_messages(question: str, limit: int) -> list[dict[str, str]]:
    return [{"role": "system", "content": PLAN_SYSTEM.format(limit=limit)},
            {"role": "user", "content": f"Question: {question}"}]


def rewrite_messages(sub_question: str, resolved: list[tuple[str, str, str]]) -> list[dict[str, str]]:
    """`resolved`: (step id, its question, its answer) of every step the sub-question depends on."""
    known = "\n".join(f"step {step_id}: {question} -> {answer}" for step_id, question, answer in resolved)
    return [{"role": "system", "content": REWRITE_SYSTEM},
            {"role": "user", "content": f"Earlier steps:\n{known}\n\nSub-question: {sub_question}"}]


def build_plan(question: str, raw: Plan | None, limit: int, question_type: str = "auto") -> CheckedPlan:
    """The model's plan checked and repaired into a DAG (or the question alone when there is no usable plan)."""
    repairs: list[str] = []
    kind = question_type if question_type in ("specific", "abstract") else \
        ("abstract" if raw is not None and str(raw.type).strip().lower() == "abstract" else "specific")
    nodes: list[PlanNode] = []
    renamed: dict[str, str] = {}
    for planned in (raw.sub_questions if raw is not None else []):
        text = " ".join(str(planned.question).split())
        if not text:
            repairs.append(f"sub-question {planned.id}: empty, left out")
            continue
        if len(nodes) == limit:
            repairs.append(f"more than {limit} sub-questions: the rest left out")
            break
        node_id = str(planned.id).strip() or str(len(nodes) + 1)
        if node_id in {node.id for node in nodes}:
            repairs.append(f"id {node_id} given twice: the later one renamed {len(nodes) + 1}")
            node_id = str(len(nodes) + 1)
        renamed.setdefault(str(planned.id).strip(), node_id)
        nodes.append(PlanNode(node_id, text, [str(dep).strip() for dep in planned.depends_on]))
    if not nodes:
        if raw is not None:
            repairs.append("no sub-question: the question itself is the plan")
        return CheckedPlan(kind, [PlanNode("1", question)], repairs)
    ids = {node.id for node in nodes}
    for node in nodes:
        kept = []
        for dep in dict.fromkeys(node.depends_on):
            dep = renamed.get(dep, dep)
            if dep == node.id:
                repairs.append(f"{node.id} depended on itself: dropped")
            elif dep not in ids:
                repairs.append(f"{node.id} depended on unknown id {dep}: dropped")
            else:
                kept.append(dep)
        node.depends_on = kept
    _break_cycles(nodes, repairs)
    _assign_levels(nodes)
    return CheckedPlan(kind, nodes, repairs)


def _topological(nodes: list[PlanNode]) -> tuple[list[str], list[PlanNode]]:
    """Kahn's algorithm: the ids in a dependency order, and the nodes left over (those on or behind a cycle)."""
    done: list[str] = []
    remaining = list(nodes)
    progress = True
    while remaining and progress:
        ready = [node for node in remaining if all(dep in done for dep in node.depends_on)]
        progress = bool(ready)
        done.extend(node.id for node in ready)
        remaining = [node for node in remaining if node.id not in done]
    return done, remaining


def _break_cycles(nodes: list[PlanNode], repairs: list[str]) -> None:
    """Among the nodes left on a cycle, keep only dependencies on nodes listed earlier: that cannot cycle."""
    _, remaining = _topological(nodes)
    if not remaining:
        return
    position = {node.id: index for index, node in enumerate(nodes)}
    stuck = {node.id for node in remaining}
    for node in remaining:
        dropped = [dep for dep in node.depends_on if dep in stuck and position[dep] >= position[node.id]]
        if dropped:
            repairs.append(f"cycle: {node.id} no longer depends on {', '.join(dropped)}")
            node.depends_on = [dep for dep in node.depends_on if dep not in dropped]


def _assign_levels(nodes: list[PlanNode]) -> None:
    order, remaining = _topological(nodes)
    assert not remaining, "a repaired plan is acyclic"
    by_id = {node.id: node for node in nodes}
    for node_id in order:
        node = by_id[node_id]
        node.level = 1 + max((by_id[dep].level for dep in node.depends_on), default=-1)


def plan_as_dict(plan: CheckedPlan) -> dict[str, Any]:
    return {"type": plan.type, "repairs": plan.repairs,
            "nodes": [{"id": n.id, "question": n.question, "depends_on": n.depends_on, "level": n.level}
                      for n in plan.nodes]}
