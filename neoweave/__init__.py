"""neoweave: documents into one knowledge graph; questions answered by traversing it.

    import neoweave
    with neoweave.open(".neoweave") as kb:
        kb.ingest("docs/")
        print(kb.retrieve("How do I cancel a task?", strategy="ppr").items[0].text)

Importing the package loads nothing heavy: the store, models and LLM start when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from neoweave.kb import KnowledgeBase

__version__ = "0.1.0"
__all__ = ["KnowledgeBase", "Limits", "__version__", "open"]


def open(path: Any = None, **options: Any) -> KnowledgeBase:
    """A knowledge base over the data directory `path` (see `neoweave.kb.open_kb` for the options)."""
    from neoweave.kb import open_kb

    return open_kb(path, **options)


def __getattr__(name: str) -> Any:
    if name in ("KnowledgeBase", "Limits"):
        import neoweave.kb

        return getattr(neoweave.kb, name)
    raise AttributeError(f"module 'neoweave' has no attribute {name!r}")
