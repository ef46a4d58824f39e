"""Loaders and chunking on real files, without a store."""

import itertools
import json

from neoweave.ingest.chunking import Chunker, ChunkingOptions
from neoweave.ingest.documents import Document, Skipped
from neoweave.ingest.html import HtmlOptions, parse_html
from neoweave.ingest.records import iter_jsonl, record_to_document
from neoweave.ingest.sources import SourceOptions, SourceStats, iter_documents
from neoweave.ingest.text import parse_text
from neoweave.nlp.link_context import link_context

HASH = {fmt: {"chunk_size": 1000} for fmt in ("html", "text", "markdown", "record")}


def _parse(site, relative):
    root = site.as_uri() + "/"
    path = site / relative
    return parse_html(path.read_text(), doc_id=root + relative, page_url=root + relative, root_url=root,
                      source=str(path), content_hash="h", options=HtmlOptions())


def test_sections_titles_anchors_and_chrome(site):
    doc = _parse(site, "guide/async.html")
    assert [s.anchor for s in doc.sections] == ["async-guide", "event-loop", "missing-targets"]
    assert [s.level for s in doc.sections] == [1, 2, 2]
    assert doc.title == "Async guide"
    event_loop = doc.sections[1]
    assert event_loop.title == "Event loop" and event_loop.url.endswith("guide/async.html#event-loop")
    assert "run-function" in event_loop.anchors  # inner element ids are link targets too
    assert doc.anchor_map()["run-function"] == event_loop.id
    # nested sections are not repeated in their parent; navigation chrome is gone
    assert "event loop runs coroutines" not in doc.sections[0].text
    assert "¶" not in event_loop.text
    assert "Event loop" not in doc.sections[0].text  # the local table of contents (nav) was removed
    offsets = [(s.start, s.end) for s in doc.sections]
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(offsets))


def test_links_are_absolute_with_anchor_and_context(site):
    doc = _parse(site, "guide/async.html")
    links = {link.text: link for link in doc.sections[1].links}
    run = links["the run function"]
    assert run.internal and run.anchor == "run-function" and run.target_url == doc.url
    gc = links["garbage collection"]
    assert gc.target_url == site.as_uri() + "/guide/memory.html" and gc.anchor == "garbage-collection"
    # twelve words of context: six before and six after the anchor text
    assert gc.context == ("run function below, and remember that garbage collection "
                          "still reclaims finished tasks. The event")
    assert "Event loop" not in links  # the toc-backref link is navigation


def test_external_links_and_pages_without_sections(site):
    doc = _parse(site, "index.html")
    links = doc.sections[0].links
    external = [link for link in links if not link.internal]
    assert [link.target_url for link in external] == ["https://example.org/tiny"]
    assert all("genindex" not in link.target_url and "search" not in link.target_url for link in links)


def test_link_context_window():
    text = "one two three four five six seven LINK eight nine ten eleven twelve thirteen"
    start = text.index("LINK")
    assert link_context(text, start, start + 4, 12) == (
        "two three four five six seven LINK eight nine ten eleven twelve thirteen")
    assert link_context(text, start, start + 4, 0) == "LINK"


def test_truncated_and_empty_html(site):
    root = site.as_uri() + "/"
    truncated = "<html><body><div role='main'><section id='a'><h1>A</h1><p>cut off"
    result = parse_html(truncated, doc_id="t", page_url=root + "t.html", root_url=root, source="t.html",
                        content_hash="h", options=HtmlOptions())
    assert isinstance(result, Skipped) and "truncated" in result.reason
    empty = "<html><body><div role='main'></div></body></html>"
    result = parse_html(empty, doc_id="e", page_url=root + "e.html", root_url=root, source="e.html",
                        content_hash="h", options=HtmlOptions())
    assert isinstance(result, Skipped) and "no text" in result.reason


def test_chunks_stay_inside_sections_with_document_offsets(site):
    doc = Chunker(ChunkingOptions(chunk_size=120, chunk_overlap=20)).chunk(_parse(site, "guide/async.html"))
    full = "\n\n".join(s.text for s in doc.sections)
    for section in doc.sections:
        for chunk in section.chunks:
            assert section.start <= chunk.start < chunk.end <= section.end
            assert full[chunk.start:chunk.end] == chunk.text
            assert len(chunk.text) <= 120
    assert [c.order for c in doc.chunks] == list(range(len(doc.chunks)))
    assert len({c.id for c in doc.chunks}) == len(doc.chunks)


def test_folder_walk_ignores_assets_and_navigation_pages(site):
    stats = SourceStats()
    items = list(iter_documents(site, SourceOptions(), HASH, stats))
    assert sorted(d.url.rsplit("/", 1)[-1] for d in items if isinstance(d, Document)) == [
        "async.html", "index.html", "memory.html"]
    assert stats.files_seen == 5 and stats.files_ignored == 2  # basic.css, genindex.html
    with_base = list(iter_documents(site, SourceOptions(base_url="https://docs.example.org/tiny"), HASH))
    assert {d.id for d in with_base} >= {"https://docs.example.org/tiny/guide/async.html"}


def test_records_canonical_and_multihop_shapes():
    canonical = record_to_document({"id": "d1", "title": "T", "text": "Body text.", "url": "u",
                                    "metadata": {"lang": "en", "tags": ["a"]}},
                                   source="c.jsonl", line=3, settings={})
    assert canonical.id == "d1" and canonical.sections[0].text == "Body text."
    assert canonical.metadata == {"lang": "en", "tags": ["a"]} and canonical.source == "c.jsonl:3"
    article = record_to_document({"title": "Markets rally", "author": "A. Writer", "source": "Wire",
                                  "published_at": "2023-10-01T00:00:00+00:00", "category": "business",
                                  "url": "https://news.example/markets", "body": "Stocks rose."},
                                 source="m.json", line=None, settings={})
    assert article.id == "https://news.example/markets" and article.published_at.startswith("2023-10-01")
    assert article.metadata == {"author": "A. Writer", "source": "Wire", "category": "business"}


def test_bad_jsonl_lines_are_reported_with_line_numbers():
    lines = [b'{"id": "a", "title": "A", "text": "fine"}\n', b"[1, 2]\n", b"{not json\n", b"\n",
             b'{"id": "b", "title": "B"}\n', b'{"id": "c", "text": ""}\n', b"\xff\xfe\n"]
    items = list(iter_jsonl(enumerate(lines, 1), source="x.jsonl", settings={}, max_record_bytes=1000))
    skipped = {s.line: s.reason for s in items if isinstance(s, Skipped)}
    assert isinstance(items[0], Document)
    assert "not an object" in skipped[2] and "not valid JSON" in skipped[3]
    assert "no text field" in skipped[5] and "empty" in skipped[6] and "UTF-8" in skipped[7]
    assert 4 not in skipped  # blank lines are fine


def test_markdown_headings_become_sections_and_links_resolve_relative(tmp_path):
    text = "# Guide\n\nIntro with a [link](other.md#setup).\n\n## Setup\n\n```\n# not a heading\n```\n\nDone.\n"
    root = tmp_path.as_uri() + "/"
    doc = parse_text(text, doc_id=root + "guide.md", page_url=root + "guide.md", root_url=root,
                     source="guide.md", content_hash="h", markdown=True)
    assert [s.anchor for s in doc.sections] == ["guide", "setup"]
    assert "# not a heading" in doc.sections[1].text
    link = doc.sections[0].links[0]
    assert link.target_url == root + "other.md" and link.anchor == "setup" and link.internal
    assert "[link]" not in doc.sections[0].text and "a link." in doc.sections[0].text


def test_json_array_file(tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps([{"id": "x", "text": "one"}, {"id": "y", "text": "two"}, 5]))
    items = list(iter_documents(path, SourceOptions(), HASH))
    assert [i.id for i in items if isinstance(i, Document)] == ["x", "y"]
    assert any(isinstance(i, Skipped) and "[2]" in i.source for i in items)
