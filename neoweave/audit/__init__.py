"""Audit: why an answer was given, as a subgraph (JSON), a graph view (HTML) and a Neo4j Browser statement.

    from neoweave.audit import explain, render_html
    explanation = explain(strategy("larag", store, embedder).retrieve(question), store)
    Path("why.html").write_text(render_html(explanation))
"""

from neoweave.audit.explain import ExplainNode, ExplainRelationship, Explanation, cypher_literal, explain
from neoweave.audit.view import render_html, visualization_graph

__all__ = ["ExplainNode", "ExplainRelationship", "Explanation", "cypher_literal", "explain", "render_html",
           "visualization_graph"]
