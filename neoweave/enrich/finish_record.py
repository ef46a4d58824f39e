"""When a step's graph-wide phases may be skipped: the graph has not changed since they last completed.

`enrich kg` with nothing new to extract still runs its graph-wide phases (migrations, title mentions, entity
refresh, resolution, homes, inferred links): ~10 s on the Python docs, minutes at 100k chunks, for a run that a
scheduled `sync && enrich kg` mostly makes with nothing changed. The phases are a function of the graph, the
step's parameters and the code, so after they complete the runner records the graph's write stamp (which every
write through neoweave replaces) and a fingerprint of the rest; a later run that processes no chunk and finds
both unchanged skips them.

The record is a file next to the store's own (`GraphStore.derived_directory`), not a node: writing a node would
replace the stamp it records. A store without a local directory (a remote server) has no record, and its runs
always finish. A run whose phases failed in part (an LLM fallback) records nothing.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
from pathlib import Path
from typing import Any

from neoweave.enrich.base import EnrichStep, StepContext
from neoweave.store.base import GraphStore

log = logging.getLogger(__name__)

_PACKAGE = Path(__file__).resolve().parents[1]


@functools.lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A hash of neoweave's own code and statements: a changed release or checkout (a new migration, a new
    phase) runs the phases again whatever the version string says."""
    digest = hashlib.sha256()
    for path in sorted(p for p in _PACKAGE.rglob("*") if p.suffix in (".py", ".cypher") and p.is_file()):
        digest.update(str(path.relative_to(_PACKAGE)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()[:16]


def fingerprint_of(described: dict[str, Any], ctx: StepContext) -> str:
    """A short hash of what a step's phases depend on besides the graph: `described`, the embedding model and
    the code (the one recipe of the finish record and the kg step's record of change)."""
    embedder = None if ctx.embedder is None else ctx.embedder.model_name
    described = {**described, "embedder": embedder, "code": code_fingerprint()}
    return hashlib.sha256(json.dumps(described, sort_keys=True, default=str).encode()).hexdigest()[:16]


def finish_fingerprint(step: EnrichStep, signature: str, ctx: StepContext) -> str:
    """What the phases' result depends on besides the graph: the step's signature and parameters, the
    embedding model, the code."""
    return fingerprint_of({"signature": signature, "parameters": step.parameters()}, ctx)


class FinishRecord:
    """The stamp and fingerprint of a step's last completed graph-wide phases, in the store's directory."""

    def __init__(self, store: GraphStore, step_name: str) -> None:
        directory = store.derived_directory("enrich")
        self.path = None if directory is None else directory / f"{step_name}-finished.json"

    def matches(self, stamp: str | None, fingerprint: str) -> bool:
        if self.path is None or stamp is None:
            return False
        try:
            held: dict[str, Any] = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return held.get("stamp") == stamp and held.get("fingerprint") == fingerprint

    def save(self, stamp: str | None, fingerprint: str) -> None:
        if self.path is None or stamp is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            partial = self.path.with_suffix(".tmp")
            partial.write_text(json.dumps({"stamp": stamp, "fingerprint": fingerprint}), encoding="utf-8")
            os.replace(partial, self.path)
        except OSError as exc:  # only a shortcut is lost: the next run finishes again
            log.warning("could not record the finished phases in %s: %s", self.path, exc)
