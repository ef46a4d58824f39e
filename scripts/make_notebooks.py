"""Write the notebooks in notebooks/ from this one source (outputs empty; tests/test_notebooks.py runs them)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

ROOT = Path(__file__).resolve().parents[1]

SETUP = '''from pathlib import Path

import neoweave

SITE = Path("..") / "tests" / "data" / "site"  # a tiny hyperlinked docs site; point this at your own documents
kb = neoweave.open()  # the data directory of neoweave.toml / NEOWEAVE_DATA_DIR (default .neoweave/); Neo4j
                     # with NEOWEAVE_STORE=neo4j'''

INGEST = '''report = kb.ingest(SITE)
print(f"{report.documents_new} new, {report.documents_unchanged} unchanged documents; {report.chunks} chunks; "
      f"links: {report.links_resolved} resolved, {report.links_unresolved} unresolved")'''

NOTEBOOKS = {
    "01_quickstart.ipynb": [
        new_markdown_cell("# Quickstart: ingest, query, answer\n\nIngests a folder into the graph (the embedded "
                          "FalkorDB by default: nothing to start), looks at what was built, retrieves with two "
                          "strategies and answers with the local model. Run `bash scripts/setup.sh` first."),
        new_code_cell(SETUP),
        new_code_cell(INGEST),
        new_markdown_cell("What the graph holds: nodes per label, relationships per type, and any read-only Cypher "
                          "(`neoweave cypher --list` shows the saved exploration queries)."),
        new_code_cell("status = kb.status()\nstatus[\"nodes\"], status[\"relationships\"]"),
        new_code_cell('kb.cypher("MATCH (s:Section)-[l:LINKS_TO]->(t:Section) '
                      'RETURN s.title AS section, l.text AS link, t.title AS target")'),
        new_markdown_cell("Retrieve with naive RAG (vector search) and LARAG (vector seeds, then the hyperlinks "
                          "of their sections): each chunk says where it came from."),
        new_code_cell('''question = "How does the event loop schedule coroutines and callbacks?"
for name in ("naive", "larag"):
    result = kb.retrieve(question, strategy=name, k=1)
    print(f"== {name}: {len(result.items)} chunks, {result.context_tokens} tokens, {result.cost.total_ms:.0f} ms")
    for item in result.items:
        print(f"  {item.origin:5} {item.score:.3f} {item.section_title}")'''),
        new_markdown_cell("Answer with the LLM gateway: the local Qwen model (started on first use) or any "
                          "OpenAI-compatible endpoint set in `NEOWEAVE_LLM_*`."),
        new_code_cell('''answered = kb.answer(question, strategy="larag", k=1, prompt="hyperlinked", max_tokens=48)
print(answered.answer)
print(answered.call.model, answered.call.prompt_tokens, "prompt tokens")'''),
    ],
    "02_compare_strategies.ipynb": [
        new_markdown_cell("# Compare strategies on a QA set\n\n`evaluate` runs every strategy at every k on "
                          "every question and writes a report (table, plot, per-question records): the same as "
                          "`neoweave eval`. Here a three-question set over the tiny site; use your own QA file "
                          "or HotpotQA (see the README)."),
        new_code_cell(SETUP),
        new_code_cell('''import json

BASE = "https://docs.example.org/tiny/"
questions = [
    {"id": "loop", "question": "How does the event loop schedule coroutines and callbacks?", "answer": "",
     "evidence": [BASE + "guide/async.html#event-loop"]},
    {"id": "gc", "question": "What does the cyclic garbage collector find?", "answer": "reference cycles",
     "evidence": [BASE + "guide/memory.html#garbage-collection"]},
    {"id": "bridge", "question": "What frees the memory of objects the event loop no longer uses?",
     "answer": "", "evidence": [BASE + "guide/async.html#event-loop", BASE + "guide/memory.html#garbage-collection"]},
]
qa = Path("qa-example.jsonl")
qa.write_text("".join(json.dumps(q) + "\\n" for q in questions))'''),
        new_code_cell('''from neoweave.eval.runner import RunConfig

outcome = kb.evaluate(qa, RunConfig(["naive", "larag"], [1, 2]), Path("eval-example"), corpus=SITE,
                      base_url=BASE, progress=False)
[{key: row[key] for key in ("strategy", "k", "hit", "perfect", "recall", "chunks", "context_tokens")}
 for row in outcome.rows if row["type"] == "all"]'''),
        new_markdown_cell("The report's plot: quality against context tokens, one line per strategy."),
        new_code_cell('''from IPython.display import Image

Image(filename=str(Path("eval-example") / "plot.png"))'''),
    ],
    "03_audit_a_retrieval.ipynb": [
        new_markdown_cell("# Audit a retrieval: which nodes and edges produced the context\n\n`explain` reads a "
                          "retrieval's trace back from the graph: seeds, followed links with their context, "
                          "entities, RST edges, communities and tags, with scores and hops. The same view is "
                          "`neoweave explain QUESTION --html why.html`, and in Neo4j Browser via `--cypher`."),
        new_code_cell(SETUP),
        new_code_cell(INGEST),
        new_code_cell('''explanation = kb.explain("How does the event loop schedule coroutines?", strategy="larag", k=1)
[(node.role, node.label, node.caption[:40], node.rank, node.hop) for node in explanation.nodes]'''),
        new_code_cell("def short(node_id):\n    return node_id.rsplit('/', 1)[-1]\n\n\n"
                      "[(rel.type, short(rel.source), short(rel.target), rel.detail[:60], rel.traced)\n"
                      " for rel in explanation.relationships]"),
        new_markdown_cell("The graph view, inline (colour by role, size by score; click a node for its text):"),
        new_code_cell("from neoweave.audit import visualization_graph\n\n"
                      "visualization_graph(explanation).render(height='450px')"),
        new_markdown_cell("The same subgraph in Neo4j Browser: paste both parts."),
        new_code_cell('''print(explanation.browser_cypher()[:400])
explanation.to_html("why.html")  # one self-contained file'''),
    ],
    "04_human_in_the_loop_tags.ipynb": [
        new_markdown_cell("# Human-in-the-loop tags (Orion-RAG)\n\nTags each document (master tags) and chunk "
                          "(paragraph tags) without an LLM, shows a chunk's tag path, then adds a tag by hand: "
                          "the path and its embedding are recomputed at once, and the edit survives re-tagging."),
        new_code_cell(SETUP),
        new_code_cell(INGEST),
        new_code_cell('''report = kb.enrich("tags")
print(report.chunks, "chunks tagged")'''),
        new_code_cell('''from neoweave.enrich.tag_edits import add_tag, show_tags

doc_id = kb.cypher("MATCH (d:Document) WHERE d.title CONTAINS 'Memory' RETURN d.id AS id")[0]["id"]
show_tags(kb.store, doc_id)'''),
        new_code_cell('''edited = add_tag(kb.store, kb.embedder, doc_id, "reference counting", by="notebook")
edited'''),
        new_code_cell('''found = kb.retrieve("reference counting", strategy="orion", k=2, expand=False, prune=False)
[(item.section_title, item.details["tag_path"]) for item in found.items]'''),
    ],
}


def main() -> None:
    folder = ROOT / "notebooks"
    for old in folder.glob("*.ipynb"):
        if old.name not in NOTEBOOKS:
            old.unlink()
    for name, cells in NOTEBOOKS.items():
        notebook = new_notebook(cells=cells, metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python"}})
        for index, cell in enumerate(notebook.cells):
            cell["id"] = f"{Path(name).stem[:2]}-{index}"
        nbformat.write(notebook, folder / name)


if __name__ == "__main__":
    main()
