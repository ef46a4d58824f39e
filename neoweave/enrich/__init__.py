"""Enrichment: steps that derive graph structure (entities, relations, links, ...) from stored chunks.

    from neoweave.enrich import run
    report = run("kg", store, embedder=embedder, method="fast")
"""

from neoweave.enrich.base import EnrichReport, EnrichStep, StepContext
from neoweave.enrich.runner import make_step, run
from neoweave.registry import ENRICH_STEPS, register_step


def available() -> list[str]:
    return ENRICH_STEPS.names()


__all__ = ["EnrichReport", "EnrichStep", "StepContext", "available", "make_step", "register_step", "run"]
