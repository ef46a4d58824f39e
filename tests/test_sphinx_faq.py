"""The Sphinx FAQ dataset builder on the hand-built site plus a FAQ page."""

import json

import pytest

from neoweave.errors import NeoweaveError
from neoweave.eval.sphinx_faq import build_sphinx_faq

FAQ = """<!DOCTYPE html><html><head><title>FAQ</title></head><body><div class="body" role="main">
<section id="general-faq"><h1>General FAQ</h1>
<section id="how-does-memory-get-freed"><h3>How does memory get freed?</h3>
<p>See <a class="reference internal" href="../guide/memory.html#garbage-collection">garbage collection</a> and
<a class="reference internal" href="../guide/async.html#run-function">run()</a> for tasks, or the
<a class="reference internal" href="#why-is-it-fast">next question</a>.</p></section>
<section id="why-is-it-fast"><h3>Why is it fast?</h3><p>Because it is small.</p></section>
</section></div></body></html>
"""


def test_faq_questions_evidence_and_held_out_corpus(site, tmp_path):
    (site / "faq").mkdir()
    (site / "faq" / "general.html").write_text(FAQ)
    result = build_sphinx_faq(site, tmp_path / "out", base_url="https://docs.example.org/tiny/")
    records = [json.loads(line) for line in result.qa_path.read_text().splitlines()]
    assert [r["question"] for r in records] == ["How does memory get freed?", "Why is it fast?"]
    first, second = records
    # the inner anchor #run-function resolves to the section that holds it; links inside the FAQ don't count
    assert first["evidence"] == ["https://docs.example.org/tiny/guide/memory.html#garbage-collection",
                                 "https://docs.example.org/tiny/guide/async.html#event-loop"]
    assert first["answer"].startswith("See garbage collection") and first["type"] == "with-links"
    assert second["evidence"] == [] and result.without_evidence == 1
    assert not (result.corpus_dir / "faq").exists() and (result.corpus_dir / "guide" / "async.html").exists()


def test_no_faq_folder_is_a_clear_error(site, tmp_path):
    with pytest.raises(NeoweaveError, match="no FAQ folder"):
        build_sphinx_faq(site, tmp_path / "out")
