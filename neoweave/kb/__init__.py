"""The knowledge-base object: `neoweave.open()` and the limits every front end shares."""

from neoweave.kb.knowledge_base import KnowledgeBase, evaluate, open_kb
from neoweave.kb.limits import Limits

__all__ = ["KnowledgeBase", "Limits", "evaluate", "open_kb"]
