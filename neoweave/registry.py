"""One registry for every pluggable component found by name: retrieval strategies and enrich steps.

Built-ins are listed here by module, imported only when asked for (no import-time work, no import
cycles: `query/base.py` does not import its own strategies). Third-party components register with the
`register` decorator of the matching registry.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, Generic, TypeVar

from neoweave.errors import NeoweaveError

T = TypeVar("T")


class Registry(Generic[T]):
    """Classes of one kind by their `name` attribute; built-ins loaded lazily from their modules."""

    def __init__(self, kind: str, builtins: dict[str, str]) -> None:
        self.kind = kind
        self.builtins = builtins  # name -> module that registers it
        self._classes: dict[str, type[T]] = {}

    def register(self, cls: type[T]) -> type[T]:
        """Class decorator: make `cls` available by its `name`."""
        name = cls.name  # type: ignore[attr-defined]
        self._classes[name] = cls
        return cls

    def get(self, name: str) -> type[T]:
        if name not in self._classes and name in self.builtins:
            importlib.import_module(self.builtins[name])
        try:
            return self._classes[name]
        except KeyError:
            raise NeoweaveError(f"unknown {self.kind} {name!r}; available: {', '.join(self.names())}") from None

    def known(self) -> set[str]:
        """Every name, built-in or registered, without importing a module (names() imports them all)."""
        return {*self.builtins, *self._classes}

    def names(self) -> list[str]:
        for name in self.builtins:
            self.get(name)
        return sorted(self._classes)


STRATEGIES: Registry[Any] = Registry("strategy", {
    "naive": "neoweave.query.naive",
    "larag": "neoweave.query.larag",
    "kg": "neoweave.query.kg",
    "community_local": "neoweave.query.community_local",
    "community_global": "neoweave.query.community_global",
    "ppr": "neoweave.query.ppr",
    "hybrid": "neoweave.query.hybrid",
    "orion": "neoweave.query.orion",
    "khl": "neoweave.query.khl",
    "recursive": "neoweave.query.recursive",
    "pank": "neoweave.query.pank",
    "router": "neoweave.query.router",
})
ENRICH_STEPS: Registry[Any] = Registry("enrich step", {
    "kg": "neoweave.enrich.kg",
    "communities": "neoweave.enrich.communities",
    "tags": "neoweave.enrich.tags",
    "rst": "neoweave.enrich.rst",
})

register_strategy: Callable[[type[T]], type[T]] = STRATEGIES.register


def llm_free_strategies() -> dict[str, dict[str, Any]]:
    """Every strategy that can retrieve without an LLM, with the parameter overrides that make it (`llm_free`)."""
    return {name: dict(STRATEGIES.get(name).llm_free) for name in STRATEGIES.names()
            if not STRATEGIES.get(name).wants_llm(STRATEGIES.get(name).llm_free)}
register_step: Callable[[type[T]], type[T]] = ENRICH_STEPS.register
