"""The knowledge-base object: `neoweave.open()` and the limits every front end shares."""

from neoweave.kb.knowledge_base import KnowledgeBase
from neoweave.kb.limits import Limits
from neoweave.kb.opening import evaluate, open_kb

__all__ = ["KnowledgeBase", "Limits", "evaluate", "open_kb"]
