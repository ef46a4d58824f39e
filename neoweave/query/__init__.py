"""Query: retrieval strategies over the stored graph, found by name.

    from neoweave.query import strategy
    result = strategy("larag", store, embedder, k=5, n_links=1).retrieve("How do I cancel a task?")
"""

from neoweave.query.base import ContextItem, Cost, RetrievalResult, Strategy, Trace, available, register, strategy
from neoweave.query.prompts import PROMPTS, PromptTemplate, get_prompt, register_prompt, render

__all__ = [
    "PROMPTS", "ContextItem", "Cost", "PromptTemplate", "RetrievalResult", "Strategy", "Trace", "available",
    "get_prompt", "register", "register_prompt", "render", "strategy",
]
