"""Prompts and answer(): retrieval, prompt, and a real local model, with the cost of the whole answer."""

import pytest

from neoweave.config import load_settings
from neoweave.errors import NeoweaveError
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.llm import create_gateway
from neoweave.query import PROMPTS, get_prompt, render, strategy
from neoweave.query.answer import answer
from neoweave.query.citation_check import HOLDS_SHARE, content_words, words
from neoweave.query.citations import cited_numbers, strip_markers


@pytest.fixture
def graph(falkordb_store, embedder, site):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    return falkordb_store


def test_prompt_families_are_named_and_editable():
    assert {"basic", "role", "reasoning", "hyperlinked", "unified", "short_answer", "exact_answer"} <= set(PROMPTS)
    assert "Insufficient Information" in get_prompt("short_answer").system
    with pytest.raises(NeoweaveError, match="unknown prompt 'nope'"):
        get_prompt("nope")


def test_hyperlinked_prompt_shows_original_and_linked_context_apart(graph, embedder):
    result = strategy("larag", graph, embedder, k=1).retrieve("How does the event loop schedule coroutines?")
    seed, linked = result.items
    messages = render(get_prompt("hyperlinked"), result)
    user = messages[1]["content"]
    original_block, linked_block = user.split("Linked context (reached through hyperlinks):")
    assert seed.text in original_block and linked.text not in original_block
    assert linked.text in linked_block and "How does the event loop" in linked_block
    unified = render(get_prompt("unified"), result)[1]["content"]
    assert seed.text in unified and linked.text in unified


def test_answer_with_the_local_model(graph, embedder, llm_data_dir, model_dir):
    llm_settings = {"model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": llm_settings})
    llm = create_gateway(settings)
    result = answer("What does the cyclic garbage collector find?", strategy=strategy("naive", graph, embedder, k=2),
                    llm=llm, prompt="short_answer", max_tokens=20)
    assert result.answer  # the 0.5B model's wording varies; that it answers from the context is what counts here
    cost = result.retrieval.cost
    calls = [call for call in (result.call, result.cite_call) if call is not None]  # the answer, its citations
    assert cost.llm_calls == len(calls) and cost.prompt_tokens == sum(c.prompt_tokens for c in calls)
    assert result.call.prompt_tokens > 50
    assert set(cost.milliseconds) == {"embed", "graph", "llm"}
    assert llm.ledger.totals(stage="answer:naive").calls == 1
    assert llm.ledger.totals(stage="cite:naive").calls == len(calls) - 1
    assert result.as_dict()["retrieval"]["items"][0]["origin"] == "seed"
    # the default path checks the model's citations against the passages (no call of its own, counted above)
    numbers = [c.number for c in result.citations]
    assert cited_numbers(result.cited_answer) == numbers and strip_markers(result.cited_answer) == result.answer
    check = result.citation_check
    assert result.as_dict()["citation_check"] == (check.as_dict() if check else None)
    if check is not None:  # the model cited a passage it was given
        given = len(result.retrieval.items)
        assert set(check.why) == {n for n in numbers if n <= given}  # each passage cited, with why
        assert result.unknown_citations == [n for n in check.model if n > given]  # numbers of nothing: still flagged
        terms = [t for t in content_words(result.answer) if t not in words(result.question)]
        holders = [index for index, item in enumerate(result.retrieval.items, 1) if terms and sum(
            t in words(f"{item.section_title} {item.text}") for t in terms) >= HOLDS_SHARE * len(terms)]
        assert not holders or set(holders) & set(numbers)  # a passage that holds the answer is cited
