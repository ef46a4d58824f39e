"""An explanation as an HTML page: the subgraph drawn with neo4j-viz (Neo4j's NVL renderer), coloured by role and
sized by score, above the question, the answer and the context in the order the model saw it. Clicking a node shows
its text and scores.

neo4j-viz inlines its renderer in every page: 4.4 MB (2.4 MB of script, 2 MB of Neo4j's design-system styles), for
a graph of a few dozen nodes. A page written to a file therefore references one shared copy of the renderer,
written beside it once (`neoweave-viz-<version>.js` and `.css`, ~4.4 MB together), and is itself a few kB; it
still opens offline from disk. The script is loaded as a classic deferred script (browsers refuse module scripts
from file:// URLs): its module body is wrapped in a function, and `import.meta.url` (used only to locate layout
workers it does not ship) becomes the page's base URL. `self_contained=True` keeps the single 4.4 MB file (to
mail it); the HTTP server serves the assets itself. An unknown neo4j-viz layout falls back to the inline page.
"""

from __future__ import annotations

import html
import logging
import re
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from neoweave.audit.explain import ExplainNode, Explanation
from neoweave.errors import NeoweaveError

ROLE_COLOURS = {
    "seed": "#1f77b4", "walk": "#3182bd", "link": "#ff7f0e", "rst": "#9467bd", "kg": "#2ca02c", "fact": "#2ca02c",
    "entity_chunk": "#98df8a", "walked": "#c7c7c7", "entity": "#d62728", "community": "#8c564b",
    "section": "#aec7e8", "document": "#bcbd22", "tag": "#17becf",
}
OTHER_ROLE_COLOUR = "#e377c2"
"""Context chunks of an origin not listed (a strategy that lands later) still stand out from the structure."""

REL_COLOURS = {"LINKS_TO": "#ff7f0e", "RST": "#9467bd", "RELATED": "#d62728", "MENTIONS": "#2ca02c",
               "DESCRIBED_BY": "#2ca02c", "IN_COMMUNITY": "#8c564b", "TAGGED": "#17becf"}


def role_colour(role: str) -> str:
    return ROLE_COLOURS.get(role, OTHER_ROLE_COLOUR)


def _size(node: ExplainNode, top: float) -> float:
    """Context nodes grow with their score (relative to the best), structure stays small."""
    if node.rank is None or node.score is None or top <= 0:
        return 12.0 if node.label in ("Entity", "Community") else 8.0
    return 16.0 + 24.0 * max(0.0, node.score) / top


def _caption(node: ExplainNode) -> str:
    text = node.caption if node.label != "Chunk" or node.caption != node.id else (node.text or node.id)
    if node.label == "Chunk":
        text = f"#{node.rank} {text}" if node.rank else text
    return text if len(text) <= 40 else text[:39] + "…"


def visualization_graph(explanation: Explanation) -> Any:
    """The explanation as a neo4j-viz `VisualizationGraph` (for notebooks: `.render()` shows it inline)."""
    try:
        from neo4j_viz import Node, Relationship, VisualizationGraph
    except ImportError as exc:  # pragma: no cover - the extra is installed by setup.sh
        raise NeoweaveError("the graph view needs neo4j-viz",
                            hint="pip install 'neoweave[viz]' (scripts/setup.sh installs it)") from exc
    scores = [node.score for node in explanation.nodes if node.rank is not None and node.score is not None]
    top = max(scores, default=0.0)
    nodes = []
    for node in explanation.nodes:
        properties = {"label": node.label, "id": node.id, "role": node.role, "text": node.text,
                      **({"score": round(node.score, 4)} if node.score is not None else {}),
                      **({"rank": node.rank} if node.rank is not None else {}),
                      **({"hop": node.hop} if node.hop is not None else {}),
                      **{key: value for key, value in node.properties.items() if value not in (None, "")}}
        nodes.append(Node(id=node.id, caption=_caption(node), size=_size(node, top), color=role_colour(node.role),
                          properties=properties))
    relationships = [
        Relationship(source=rel.source, target=rel.target, caption=rel.type, color=REL_COLOURS.get(rel.type, "#999999"),
                     properties={"type": rel.type, "detail": rel.detail, "stored": rel.stored,
                                 **({"weight": rel.weight} if rel.weight is not None else {}),
                                 **({"method": rel.method} if rel.method else {})})
        for rel in explanation.relationships]
    return VisualizationGraph(nodes=nodes, relationships=relationships)


log = logging.getLogger(__name__)
_SCRIPT_OPEN, _SCRIPT_CLOSE = '<script type="module" crossorigin>', "</script>"
_STYLE_OPEN, _STYLE_CLOSE = '<style rel="stylesheet" crossorigin>', "</style>"


@dataclass(frozen=True)
class RendererAssets:
    """The renderer neo4j-viz inlines, as two files a page can share."""

    script: str
    style: str

    @property
    def names(self) -> tuple[str, str]:
        version = metadata.version("neo4j-viz")
        return f"neoweave-viz-{version}.js", f"neoweave-viz-{version}.css"

    def write_beside(self, page_path: Path) -> list[Path]:
        """Write the assets into the page's folder unless the same files are there already."""
        written = []
        for name, text in zip(self.names, (self.script, self.style), strict=True):
            target = page_path.parent / name
            if not target.exists() or target.stat().st_size != len(text.encode("utf-8")):
                target.write_text(text, encoding="utf-8")
                written.append(target)
        return written


def _page(explanation: Explanation) -> str:
    page = visualization_graph(explanation).render(height="70vh").data
    page = page.replace("<title>neo4j-viz</title>",
                        f"<title>neoweave explain: {html.escape(explanation.question[:80])}</title>", 1)
    page = page.replace('style="width: 100%; height: 100vh"', 'style="width: 100%; height: 70vh"', 1)
    return page.replace("</body>", _summary(explanation) + "\n</body>", 1)


def split_renderer(page: str, prefix: str = "") -> tuple[str, RendererAssets] | None:
    """The page with its inlined renderer replaced by references to `prefix` + the asset names, and the assets;
    None when the page is not laid out as expected (another neo4j-viz version): then it stays inline."""
    script_at = page.find(_SCRIPT_OPEN)
    script_end = page.find(_SCRIPT_CLOSE, script_at + len(_SCRIPT_OPEN)) if script_at >= 0 else -1
    style_at = page.find(_STYLE_OPEN, script_end) if script_end >= 0 else -1
    style_end = page.find(_STYLE_CLOSE, style_at) if style_at >= 0 else -1
    if min(script_at, script_end, style_at, style_end) < 0:
        log.warning("neo4j-viz %s lays its page out differently: the renderer stays inline (4+ MB per page)",
                    metadata.version("neo4j-viz"))
        return None
    module = page[script_at + len(_SCRIPT_OPEN):script_end]
    container = re.search(r'<div id="(neo4j-viz-[0-9a-f]+)"', page)
    lookup = f"document.getElementById(`{container.group(1)}`)" if container else None
    if lookup is None or module.count(lookup) != 1:
        log.warning("neo4j-viz %s finds its container differently: the renderer stays inline (4+ MB per page)",
                    metadata.version("neo4j-viz"))
        return None
    # each render names its container anew (neo4j-viz-<random>) inside the script: the shared copy finds it by
    # prefix, so that one script serves every page
    module = module.replace(lookup, '(document.querySelector(`div[id^="neo4j-viz-"]`))')
    script = '(() => {"use strict";\n' + module.replace("import.meta.url", "document.baseURI") + "\n})();\n"
    assets = RendererAssets(script, page[style_at + len(_STYLE_OPEN):style_end])
    script_name, style_name = assets.names
    slim = (page[:script_at] + f'<script defer src="{html.escape(prefix + script_name)}"></script>'
            + page[script_end + len(_SCRIPT_CLOSE):style_at]
            + f'<link rel="stylesheet" href="{html.escape(prefix + style_name)}">'
            + page[style_end + len(_STYLE_CLOSE):])
    return slim, assets


def render_html(explanation: Explanation, *, assets_prefix: str | None = None) -> str:
    """The page: the graph, then the question, the answer and the context table. Self-contained (the renderer
    inlined) unless `assets_prefix` is given: then it loads the renderer from prefix + `RendererAssets.names`."""
    page = _page(explanation)
    if assets_prefix is None:
        return page
    split = split_renderer(page, assets_prefix)
    return page if split is None else split[0]


def write_html(explanation: Explanation, path: Path, *, self_contained: bool = False) -> tuple[str, list[Path]]:
    """Write the page to `path`, with the shared renderer beside it unless `self_contained`; returns the page and
    the asset files written (none when they were there already)."""
    page = _page(explanation)
    split = None if self_contained else split_renderer(page)
    written: list[Path] = []
    if split is not None:
        page, assets = split
        written = assets.write_beside(path)
    path.write_text(page, encoding="utf-8")
    return page, written


def renderer_assets() -> RendererAssets | None:
    """The shared renderer (what `/assets/<name>` serves), from an empty page."""
    from neo4j_viz import VisualizationGraph

    split = split_renderer(VisualizationGraph(nodes=[], relationships=[]).render().data)
    return None if split is None else split[1]


def _sources(citations: list[dict[str, Any]]) -> str:
    """The answer's citations as a list: where each cited passage is, and the numbers that name none."""
    if not citations:
        return ""
    esc = html.escape
    items = []
    for citation in citations:
        source = esc(str(citation.get("source", "")))
        if citation.get("known") and str(citation.get("url", "")).startswith(("http://", "https://", "file:")):
            source = f"<a href='{esc(str(citation['url']))}' target='_blank' rel='noopener'>{source}</a>"
        flag = "" if citation.get("known") else " class='nw-warn'"
        items.append(f"<li{flag}>[{int(citation['number'])}] {source}</li>")
    return f"<p><b>Sources cited:</b></p><ul class='nw-sources'>{''.join(items)}</ul>"


def _summary(explanation: Explanation) -> str:
    esc = html.escape
    legend = "".join(f'<span class="nw-role" style="background:{role_colour(role)}">{esc(role)}</span>'
                     for role in sorted({node.role for node in explanation.nodes}))
    rows = []
    cited = {c["number"] for c in explanation.citations if c.get("known")}
    for node in sorted((n for n in explanation.nodes if n.rank is not None and n.label == "Chunk"),
                       key=lambda n: n.rank or 0):
        where = node.properties.get("section_title") or node.properties.get("section_id", "")
        mark = " <b class='nw-cited' title='cited by the answer'>cited</b>" if node.rank in cited else ""
        rows.append(f"<tr><td>{node.rank}{mark}</td><td>{esc(node.role)}</td>"
                    f"<td>{'' if node.score is None else f'{node.score:.3f}'}</td>"
                    f"<td>{'' if node.hop is None else node.hop}</td><td>{esc(str(where))}</td>"
                    f"<td>{esc(node.text[:400])}</td></tr>")
    cost = explanation.cost
    timing = ", ".join(f"{stage} {ms:.0f} ms" for stage, ms in cost.get("milliseconds", {}).items())
    statements = ", ".join(f"{name} {ms:.1f} ms" for name, ms in explanation.statement_ms.items())
    answer = (f"<p><b>Answer:</b> {esc(explanation.answer)}</p>{_sources(explanation.citations)}"
              if explanation.answer else "")
    missing = (f"<p class='nw-warn'>Not in the graph any more: {esc(', '.join(explanation.missing[:20]))}</p>"
               if explanation.missing else "")
    return f"""<section id="neoweave-explain" style="font-family:system-ui,sans-serif;padding:0 1em 2em">
<style>#neoweave-explain td,#neoweave-explain th{{border-bottom:1px solid #ddd;padding:4px;text-align:left;
vertical-align:top}} .nw-role{{display:inline-block;padding:2px 8px;margin:2px;border-radius:8px;color:#fff}}
.nw-warn{{color:#b00}} .nw-cited{{color:#1a7f37}}</style>
<h2>{esc(explanation.question)}</h2>
<p><b>Strategy:</b> {esc(explanation.strategy)} {esc(str(explanation.parameters))}</p>
{answer}<p>{legend}</p>
<p>{len(explanation.nodes)} nodes, {len(explanation.relationships)} relationships; {explanation.context_tokens}
context tokens; {cost.get('llm_calls', 0)} LLM calls ({cost.get('llm_tokens', 0)} tokens); {esc(timing)}</p>
{f'<p class="nw-statements"><b>Statements:</b> {esc(statements)}</p>' if statements else ''}{missing}
<table><thead><tr><th>#</th><th>role</th><th>score</th><th>hop</th><th>section</th><th>text</th></tr></thead>
<tbody>{''.join(rows)}</tbody></table>
</section>"""
