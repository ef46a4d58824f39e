"""The router: classify each question and hand it to the strategy that does best on its class.

Classes come from `question_types` (rules, or one LLM call with `classify=llm`). The mapping class -> strategy
is `routes` ("class=strategy" entries) over the built-in defaults below; `neoweave eval --fit-router` fits it
from an evaluation run (per class, the strategy with the best answer quality, fewer LLM tokens breaking
near-ties) and writes it to the `[router]` section of neoweave.toml, which the CLI, the HTTP API and eval read.
A route to a strategy whose layer the graph lacks (kg and ppr need entities, community search communities,
orion tags) or that needs an LLM when there is none falls back to `fallback`, and the result says so.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from typing import Any, ClassVar

from neoweave.errors import NeoweaveError
from neoweave.query import question_types
from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, register
from neoweave.query.iterative import absorb, sub_retriever
from neoweave.registry import STRATEGIES

log = logging.getLogger(__name__)

DEFAULT_ROUTES: dict[str, str] = {
    "single-fact": "ppr", "comparison": "ppr", "temporal": "ppr", "bridge": "ppr",
    "abstract": "community_local", "unanswerable": "hybrid",
}
"""Before any fit: the entity graph walk, best at every context budget on HotpotQA-100 (README: perfect 0.87
against hybrid's 0.61 at k = 5) and best in exact match on the answered questions; community search for
abstract questions; hybrid, which needs no entity layer, for the rest (and as the fallback)."""
NEEDS_LAYER = {"kg": "entities", "ppr": "entities", "community_local": "communities",
               "community_global": "communities", "orion": "tags"}


def parse_routes(entries: tuple[str, ...] | list[str]) -> dict[str, str]:
    """("comparison=pank", ...) -> {"comparison": "pank"}, each class and strategy checked."""
    routes: dict[str, str] = {}
    for entry in entries:
        klass, sep, name = entry.partition("=")
        klass, name = klass.strip(), name.strip()
        if not sep or klass not in question_types.CLASSES:
            raise NeoweaveError(f"router: bad route {entry!r}; expected CLASS=STRATEGY with CLASS one of "
                                f"{', '.join(question_types.CLASSES)}")
        if name == "router":
            raise NeoweaveError(f"router: route {entry!r} sends questions to the router itself")
        STRATEGIES.get(name)  # unknown names raise, listing the known ones
        routes[klass] = name
    return routes


@register
@dataclass
class Router(Strategy):
    name = "router"
    reads_link_contexts: ClassVar[bool] = True

    routes: tuple[str, ...] = ()
    """CLASS=STRATEGY entries over DEFAULT_ROUTES (neoweave.toml's [router] routes when not given)."""
    classify: str = "rules"
    """rules (no LLM) or llm (one short call; the rules' class when it fails)."""
    fallback: str = "hybrid"
    """Where a route goes when its strategy cannot run on this graph (missing layer, no LLM)."""
    k: int = 5
    """Passed to the routed strategy."""

    @classmethod
    def wants_llm(cls, overrides: dict[str, Any] | None = None) -> bool:
        """True when classification or a route's strategy calls the LLM."""
        settings = {"routes": (), "classify": "rules", **(overrides or {})}
        routes = {**DEFAULT_ROUTES, **parse_routes(settings["routes"])}
        return settings["classify"] == "llm" or any(STRATEGIES.get(name).wants_llm() for name in routes.values())

    def validate(self) -> None:
        self._at_least(1, "k")
        if self.classify not in ("rules", "llm"):
            raise NeoweaveError(f"router: classify must be rules or llm, got {self.classify!r}")
        if self.classify == "llm" and self.llm is None:
            raise NeoweaveError("router: classify=llm needs an LLM", hint="configure [llm], or -P classify=rules")
        parse_routes(self.routes)
        STRATEGIES.get(self.fallback)

    @property
    def route_map(self) -> dict[str, str]:
        return {**DEFAULT_ROUTES, **parse_routes(self.routes)}

    @cached_property
    def _layers(self) -> dict[str, bool]:
        present = {row["layer"] for row in self.store.run("graph_layers", {})}
        return {layer: layer in present for layer in ("entities", "communities", "tags")}

    def runnable(self, name: str) -> str | None:
        """Why the strategy `name` cannot run here, or None."""
        layer = NEEDS_LAYER.get(name)
        if layer and not self._layers.get(layer):
            return f"the graph has no {layer}"
        if STRATEGIES.get(name).wants_llm() and self.llm is None:
            return "no LLM"
        return None

    def question_class(self, question: str, cost: Cost) -> tuple[str, str]:
        """(class, how it was found)."""
        by_rules = question_types.classify_rules(question)
        if self.classify != "llm":
            return by_rules, "rules"
        with cost.timed("classify"):
            reply = self.llm.structured(question_types.classify_messages(question), question_types.QuestionClass,
                                        stage=question_types.CLASSIFY_STAGE, max_tokens=24)
        cost.count_calls(reply.calls, reply.ok)
        found = question_types.parse_class(reply.value.type) if reply.ok else None
        return (found, "llm") if found else (by_rules, "rules (the LLM gave no class)")

    def _retrieve(self, question: str, trace: Trace, cost: Cost, result: RetrievalResult) -> list[ContextItem]:
        klass, how = self.question_class(question, cost)
        chosen = self.route_map[klass]
        reason = self.runnable(chosen)
        if reason:
            log.info("router: %s questions go to %s, but %s: %s instead", klass, chosen, reason, self.fallback)
        target = self.fallback if reason else chosen
        routed = sub_retriever(self, target, k=self.k)
        sub = routed.retrieve(question)
        absorb(trace, cost, sub)
        result.facts, result.reports, result.points = sub.facts, sub.reports, sub.points
        result.sub_questions, result.answer = sub.sub_questions, sub.answer
        result.parameters.update(routed={"class": klass, "classified_by": how, "route": chosen, "strategy": target,
                                         "fallback_reason": reason, "parameters": sub.parameters})
        return sub.items


def configured(settings: Any, strategy_name: str, overrides: dict[str, Any]) -> dict[str, Any]:
    """The router's overrides with neoweave.toml's [router] routes and classify where the caller gave none
    (other strategies' overrides unchanged)."""
    if strategy_name != "router":
        return overrides
    section = settings.router
    merged = dict(overrides)
    if "routes" not in merged and section.routes:
        merged["routes"] = tuple(f"{klass}={name}" for klass, name in section.routes.items())
    if "classify" not in merged and section.classify != "rules":
        merged["classify"] = section.classify
    return merged
