"""Fit the router from an evaluation run: per question class, which strategy answers best for its context.

Every record of the run (all strategies but the router itself, at one k) is put in its question class by the
router's rules. Per class the chosen strategy is the one with the best quality (exact match when the run has
answers, else token F1, else evidence recall); strategies within `tolerance` of that best are near-ties, and the
cheapest of them wins (quality per token decides between near-equals, never a cheap strategy that answers
worse). Cheapest means fewest LLM tokens when the run has answers (an iterative strategy reads context in every
call, not only in its final prompt), else fewest context tokens. Classes no question of the run fell into keep
the default route. The mapping goes to the `[router]` section of neoweave.toml, with the evidence printed beside it.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from neoweave.errors import NeoweaveError
from neoweave.query.question_types import CLASSES, classify_rules

QUALITY_METRICS = ("exact_match", "f1", "recall")


@dataclass
class RouteEvidence:
    question_class: str
    strategy: str
    questions: int
    quality: float
    context_tokens: float
    llm_tokens: float
    chosen: bool = False

    @property
    def cost_tokens(self) -> float:
        """What the strategy costs per question: the LLM tokens of all its calls, else its context tokens."""
        return self.llm_tokens or self.context_tokens

    @property
    def quality_per_1k_tokens(self) -> float:
        """Quality per thousand of the tokens the choice weighs (`cost_tokens`), so the table explains the pick."""
        return 1000 * self.quality / self.cost_tokens if self.cost_tokens else 0.0


@dataclass
class RouterFit:
    metric: str
    k: int
    tolerance: float
    routes: dict[str, str]
    evidence: list[RouteEvidence] = field(default_factory=list)
    source: str = ""

    def markdown(self) -> str:
        lines = [f"Router fitted on {self.source or 'an evaluation run'}: {self.metric} at k = {self.k}, "
                 f"near-ties within {self.tolerance} go to fewer LLM tokens (context tokens without "
                 "answers).", "",
                 "| class | strategy | questions | quality | context tokens | quality per 1k tokens | LLM tokens | "
                 "chosen |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        for row in self.evidence:
            lines.append(f"| {row.question_class} | {row.strategy} | {row.questions} | {row.quality:.3f} | "
                         f"{row.context_tokens:.0f} | {row.quality_per_1k_tokens:.3f} | {row.llm_tokens:.0f} | "
                         f"{'**yes**' if row.chosen else ''} |")
        return "\n".join(lines)


def fit_routes(records: list[dict[str, Any]], *, metric: str | None = None, k: int | None = None,
               tolerance: float = 0.02, source: str = "") -> RouterFit:
    """The routes that do best per question class on these evaluation records."""
    records = [r for r in records if r.get("strategy") != "router"]
    if not records:
        raise NeoweaveError("no evaluation records of a strategy other than the router to fit it on")
    metric = metric or next((m for m in QUALITY_METRICS if any(m in r for r in records)), None)
    if metric is None or not any(metric in r for r in records):
        raise NeoweaveError(f"the records hold no {metric or ' or '.join(QUALITY_METRICS)} to fit the router on")
    k = k if k is not None else min(int(r["k"]) for r in records)
    chosen_k = [r for r in records if int(r["k"]) == k and metric in r]
    if not chosen_k:
        raise NeoweaveError(f"the records hold no run at k = {k}")
    if len({r["strategy"] for r in chosen_k}) < 2:
        raise NeoweaveError("fitting the router needs a run of at least two strategies")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for record in chosen_k:
        groups.setdefault((classify_rules(record["question"]), record["strategy"]), []).append(record)
    evidence = [RouteEvidence(klass, name, len(rows), statistics.fmean(r[metric] for r in rows),
                              statistics.fmean(r.get("context_tokens", 0) for r in rows),
                              statistics.fmean(r.get("llm_tokens", 0) for r in rows))
                for (klass, name), rows in groups.items()]
    routes: dict[str, str] = {}
    for klass in CLASSES:
        rows = [row for row in evidence if row.question_class == klass]
        if not rows:
            continue
        best = max(row.quality for row in rows)
        near = [row for row in rows if row.quality >= best - tolerance]
        pick = min(near, key=lambda row: (row.cost_tokens, -row.quality, row.strategy))
        pick.chosen = True
        routes[klass] = pick.strategy
    evidence.sort(key=lambda row: (CLASSES.index(row.question_class), -row.quality, row.strategy))
    return RouterFit(metric, k, tolerance, routes, evidence, source)


_HEADER = re.compile(r"^\s*\[\s*router\s*\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def write_router_config(path: Path, fit: RouterFit, classify: str = "rules") -> None:
    """Replace the `[router]` section of the TOML file at `path` (created when missing) with the fitted routes;
    the rest of the file is kept as it was."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    except (OSError, UnicodeDecodeError) as exc:
        raise NeoweaveError(f"cannot read {path}: {exc}") from exc
    kept: list[str] = []
    inside = False
    for line in lines:
        if _HEADER.match(line):
            inside = True
            continue
        if inside and _ANY_HEADER.match(line):
            inside = False
        if not inside:
            kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    when = datetime.now(UTC).strftime("%Y-%m-%d")
    routes = ", ".join(f'"{klass}" = "{name}"' for klass, name in fit.routes.items())
    fitted = f"{fit.source or 'eval run'}: {fit.metric} at k={fit.k}, {when}".replace("\\", "/").replace('"', "'")
    section = ["", "[router]", "# written by `neoweave eval --fit-router`; edit or delete to change the routes",
               f"routes = {{ {routes} }}", f'classify = "{classify}"', f'fitted = "{fitted}"']
    text = "\n".join([*kept, *section]).lstrip("\n") + "\n"
    try:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(path)
    except OSError as exc:
        raise NeoweaveError(f"cannot write the router's routes to {path}: {exc.strerror}") from exc
