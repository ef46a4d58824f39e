"""The web page in a real headless browser (Debian's chromium driven by Playwright) against the real server:
ask a question with two strategies, read the answers, open a graph view."""

from __future__ import annotations

import os
import shutil

import pytest
from conftest import running_server
from test_query import EVENT_LOOP_Q

from neoweave.config import load_settings
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.kb import KnowledgeBase
from neoweave.server.app import create_app

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None and not os.environ.get("CI"),
                                reason="no chromium (apt-get install chromium); CI always installs it")


def test_ask_two_strategies_read_answers_and_open_the_graph_view(falkordb_store, embedder, site, llm_data_dir,
                                                                  model_dir):
    from playwright.sync_api import expect, sync_playwright

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}})
    kb = KnowledgeBase(settings, store=falkordb_store, embedder=embedder, read_only=True)
    with running_server(create_app(kb)) as url, sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda error: errors.append(str(error)))
        posted: list[str] = []
        page.on("request", lambda request: posted.append(request.url) if request.method == "POST" else None)
        page.goto(url)
        expect(page.get_by_test_id("status")).to_contain_text("6 Chunk")
        expect(page.get_by_test_id("strategy-larag")).to_be_checked()  # naive and larag are the defaults
        page.get_by_test_id("question").fill(EVENT_LOOP_Q)
        page.locator("#k").fill("1")
        page.get_by_test_id("with-answer").check()
        page.get_by_test_id("ask-button").click()
        for name in ("naive", "larag"):  # the local 0.5B answers each (first call starts the model server), streamed
            answer = page.get_by_test_id(f"answer-{name}")  # the final answer replaces the streamed text
            expect(answer).to_be_visible(timeout=240_000)
            assert answer.inner_text().strip()
            sources = page.get_by_test_id(f"sources-{name}").locator("li")
            cited = page.get_by_test_id(f"column-{name}").locator(".cited")
            assert cited.count() == sources.count() - page.get_by_test_id(f"sources-{name}").locator(".unknown").count()
        assert sorted(posted) == [f"{url}/answer/stream"] * 2  # answers are streamed (server-sent events)
        origins = page.get_by_test_id("column-larag").locator(".origin")
        expect(origins).to_have_text(["seed", "link"])  # the seed, then the chunk its link leads to
        page.get_by_test_id("explain-larag").click()
        frame = page.frame_locator('[data-testid="graph-frame"]')
        expect(frame.locator("canvas").first).to_be_visible(timeout=60_000)  # NVL drew the graph
        view = next(f for f in page.frames if "/view?" in f.url)
        graph = view.evaluate("JSON.parse(document.getElementById('neo4j-viz-data').textContent)")
        assert "LINKS_TO" in {rel["caption"] for rel in graph["relationships"]}
        assert view.locator("#neoweave-explain").inner_text().startswith(EVENT_LOOP_Q)
        browser.close()
    assert errors == []


def test_explain_page_on_disk_is_small_and_draws_offline(falkordb_store, embedder, site, tmp_path):
    """`explain --html`: a page of a few kB that loads the shared renderer written beside it, opened from disk
    (file://, no server, no network) and drawn; a second page reuses the renderer; --self-contained inlines it."""
    from playwright.sync_api import expect, sync_playwright

    from neoweave.audit import explain
    from neoweave.query import strategy

    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    explanation = explain(strategy("larag", falkordb_store, embedder, k=1).retrieve(EVENT_LOOP_Q), falkordb_store)
    page = explanation.to_html(tmp_path / "why.html")
    assets = sorted(p.name for p in tmp_path.glob("neoweave-viz-*"))
    assert len(page.encode()) < 100_000 and (tmp_path / "why.html").read_text(encoding="utf-8") == page
    assert [name.rsplit(".", 1)[1] for name in assets] == ["css", "js"] and all(name in page for name in assets)
    stamp = {p: p.stat().st_mtime_ns for p in tmp_path.glob("neoweave-viz-*")}
    explanation.to_html(tmp_path / "again.html")
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("neoweave-viz-*")} == stamp  # written once
    whole = explanation.to_html(tmp_path / "alone.html", self_contained=True)
    assert len(whole.encode()) > 1_000_000 and "neoweave-viz-" not in whole
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        view = browser.new_page()
        errors: list[str] = []
        view.on("pageerror", lambda error: errors.append(str(error)))
        view.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
        for name in ("why.html", "again.html"):  # the second page draws with the first page's renderer
            view.goto((tmp_path / name).as_uri())
            expect(view.locator("canvas").first).to_be_visible(timeout=60_000)  # NVL drew the graph
            graph = view.evaluate("JSON.parse(document.getElementById('neo4j-viz-data').textContent)")
            assert {node["id"] for node in graph["nodes"]} == {node.id for node in explanation.nodes}
        browser.close()
    assert errors == []
