"""A Neo4j Browser guide through the saved queries (`cypher/explore/`), with example parameters read from the
graph: `neoweave serve` serves it at /guide, and `:play http://localhost:8000/guide` in Browser opens it
(Browser allows guides from localhost by default)."""

from __future__ import annotations

import html
import json

from neoweave.cypher.registry import explore_names, explore_query
from neoweave.store.base import GraphStore

DEFAULTS = {"min_weight": 5.0}
ORDER = ("graph_schema", "document_outline", "entity_neighbourhood", "community_members", "rst_chain",
         "integrity_checks", "broken_links")


def _slide(title: str, body: str, *code: str) -> str:
    runnable = "".join(f'<pre class="pre-scrollable code runnable">{html.escape(block)}</pre>' for block in code)
    return (f'<slide class="row-fluid"><div class="col-sm-12"><h3>{html.escape(title)}</h3>'
            f"<p>{body}</p>{runnable}</div></slide>")


def browser_guide(store: GraphStore) -> str:
    """The guide as Browser's `:play` HTML: one slide per saved query, its parameters set first."""
    examples = {row["param"]: row["value"] for row in store.run("explore_examples")}
    slides = [_slide("neoweave: your document graph",
                     "Documents hold sections; sections hold chunks and link to other sections (LINKS_TO, with the "
                     "link's text and context). Enrichment adds entities (MENTIONS, RELATED), Leiden communities "
                     "(IN_COMMUNITY), rhetorical relations between paragraphs (RST) and topic tags (TAGGED). Each "
                     "slide sets its parameters, then runs a saved query: click a block to put it in the editor.")]
    names = [name for name in ORDER if name in explore_names()] + [n for n in explore_names() if n not in ORDER]
    for name in names:
        query = explore_query(name)
        lines = []
        for param in query.params:
            value = examples.get(param.name, DEFAULTS.get(param.name, ""))
            lines.append(f":param {param.name} => {json.dumps(value)}")
        setup = "\n".join(lines)
        body = html.escape(query.doc) + (" First set its parameters (change them to explore elsewhere):"
                                         if lines else "")
        slides.append(_slide(name.replace("_", " "), body, *([setup] if setup else []), query.text))
    slides.append(_slide("Why an answer was given",
                         "<code>neoweave explain \"your question\" --strategy larag --cypher</code> prints a "
                         "<code>:params</code> line and a statement that draw the retrieval's subgraph here: seeds, "
                         "followed links, entities, RST edges, communities and tags."))
    return ('<article class="guide"><carousel class="deck container-fluid">' + "".join(slides)
            + "</carousel></article>")
