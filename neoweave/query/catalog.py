"""The strategies as data: name, what each is, what it needs, its parameters with defaults and docs.

One source for `neoweave strategies`, `--help` texts, `GET /strategies`, the web page and tool schemas.
"""

from __future__ import annotations

from typing import Any

from neoweave.parameters import describe_parameters
from neoweave.registry import STRATEGIES

NOT_PARAMETERS = ("store", "embedder", "llm")


def about(cls: type) -> str:
    """The first sentence of a strategy's own docstring, else of its module's (dataclasses write a signature
    into `__doc__` when the class has none)."""
    import re
    import sys

    doc = cls.__doc__ or ""
    if not doc or doc.startswith(f"{cls.__name__}("):
        doc = sys.modules[cls.__module__].__doc__ or ""
    paragraph = " ".join(doc.strip().split("\n\n")[0].split())
    return re.split(r"(?<=[a-z0-9)])\. (?=[A-Z])", paragraph)[0].rstrip(".") + "." if paragraph else ""


def strategy_entry(name: str) -> dict[str, Any]:
    cls = STRATEGIES.get(name)
    return {"name": name, "about": about(cls), "needs_llm": cls.needs_llm, "requires": list(cls.requires),
            "parameters": describe_parameters(cls, skip=NOT_PARAMETERS),
            "paper": {"values": dict(cls.paper), "source": cls.paper_source} if cls.paper else None}


def strategy_catalog() -> list[dict[str, Any]]:
    """Every registered strategy, by name."""
    return [strategy_entry(name) for name in STRATEGIES.names()]


def strategy_names() -> str:
    """'hybrid | kg | ...': for option help texts."""
    return " | ".join(STRATEGIES.names())
