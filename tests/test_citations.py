"""Answers that cite their sources, and answers streamed: the markers read back as citations to the retrieved
chunks (unknown numbers flagged), the prompts that ask for them, the streamed events, the HTTP API's server-sent
events and the citation measures (real store and embedder; the LLM a scripted double for the orchestration, the
real local model for the gateway's stream)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from conftest import ScriptedClient, running_server

from neoweave.config import load_settings
from neoweave.eval.measures import citation_scores, model_citation_scores
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.kb import KnowledgeBase
from neoweave.llm.gateway import ChatResult
from neoweave.llm.ledger import LLMCall
from neoweave.protocols import LLMClient, StreamingLLMClient
from neoweave.query import get_prompt, render, strategy
from neoweave.query.answer import answer, answer_stream
from neoweave.query.base import ContextItem
from neoweave.query.citation_check import check_citations
from neoweave.query.citations import cited_numbers, rewrite_markers, strip_markers
from neoweave.query.prompts import CITE_FOLLOW_UP
from neoweave.server.app import create_app

QUESTION = "How does the event loop schedule coroutines and callbacks?"
TOUR = "Who directed the film that was shot in or around Leland, North Carolina in 1986?"
HOTPOTQA = Path(__file__).resolve().parent.parent / "examples" / "hotpotqa" / "corpus.jsonl"


class ScriptedCitingLLM(ScriptedClient):
    """Replies with a fixed text (citation markers included) and records the prompts it was sent; `pieces`
    makes it a streaming client that sends the reply in those pieces."""

    def __init__(self, reply: str, follow_up: str = "", uncited: str = "") -> None:
        self.reply = reply
        self.follow_up = follow_up
        self.uncited = uncited  # the reply to a prompt that does not ask for citations, when it differs
        self.prompts: list[list[dict[str, str]]] = []

    def chat(self, messages, **kwargs):
        self.prompts.append(messages)
        text = self.follow_up if messages[-1]["content"] == CITE_FOLLOW_UP else self.reply
        if self.uncited and "square brackets" not in messages[0]["content"]:
            text = self.uncited
        return ChatResult(text, LLMCall(stage=kwargs.get("stage", ""), model=self.model, prompt_tokens=100,
                                        completion_tokens=5, latency_ms=3.0))


class ScriptedStream:
    def __init__(self, pieces: list[str]) -> None:
        self.pieces = pieces
        self.result: ChatResult | None = None

    def __iter__(self):
        yield from self.pieces
        self.result = ChatResult("".join(self.pieces), LLMCall(stage="answer", model="scripted"))


class ScriptedStreamingLLM(ScriptedCitingLLM):
    def chat_stream(self, messages, **kwargs):
        self.prompts.append(messages)
        return ScriptedStream([self.reply[i:i + 4] for i in range(0, len(self.reply), 4)])


@pytest.fixture
def graph(falkordb_store, embedder, site):
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest(site)
    return falkordb_store


@pytest.mark.parametrize(("text", "numbers", "plain"), [
    ("Paris [2].", [2], "Paris."),
    ("yes [1][3]", [1, 3], "yes"),
    ("It runs callbacks [1, 3] and tasks [2-4].", [1, 3, 2, 4], "It runs callbacks and tasks."),
    ("[Passage 7] says so", [7], "says so"),
    ("Use items[2] to get it [1]", [1], "Use items[2] to get it"),  # an index is not a citation
    ("Call `queue[0]` first [5]", [5], "Call `queue[0]` first"),  # nor is code
    ("```\nx = a[1]\n```", [], "```\nx = a[1]\n```"),
    ("Insufficient Information", [], "Insufficient Information"),
    ("see [1-2000]", [1, 2000], "see"),  # no range of 2,000 passages
])
def test_markers_are_read_and_stripped(text, numbers, plain):
    assert cited_numbers(text) == numbers
    assert strip_markers(text) == plain


def test_every_prompt_numbers_items_once_and_asks_for_citations(graph, embedder):
    result = strategy("larag", graph, embedder, k=1).retrieve(QUESTION)
    seed, linked = result.items
    assert (seed.origin, linked.origin) == ("seed", "link")
    user = render(get_prompt("hyperlinked"), result, cite=True)[1]["content"]
    assert f"[1] {seed.section_title}" in user and f"[2] {linked.section_title}" in user  # one numbering
    system = render(get_prompt("basic"), result, cite=True)[0]["content"]
    assert "square brackets" in system
    assert "square brackets" not in render(get_prompt("basic"), result)[0]["content"]
    short = get_prompt("exact_answer")  # cites in a turn after the answer: the answer's prompt is unchanged
    assert render(short, result, cite=True) == render(short, result) and short.cite_follow_up == CITE_FOLLOW_UP


def test_answer_citations_name_the_retrieved_chunks_and_flag_the_rest(graph, embedder):
    llm = ScriptedCitingLLM("The event loop runs them [2] as tasks [1][9].")
    naive = strategy("naive", graph, embedder, k=3)
    answered = answer(QUESTION, strategy=naive, llm=llm, prompt="basic")
    items = answered.retrieval.items
    assert answered.answer == "The event loop runs them as tasks."
    assert answered.cited_answer == "The event loop runs them [2] as tasks [1][9]."
    assert [(c.number, c.known, c.chunk_id) for c in answered.citations] == [
        (2, True, items[1].chunk_id), (1, True, items[0].chunk_id), (9, False, "")]
    assert answered.unknown_citations == [9]
    assert answered.citations[0].source == items[1].url and items[1].url.startswith("file:")
    data = answered.as_dict()
    assert data["citations"][2] == {"number": 9, "known": False, "chunk_id": "", "section_id": "", "doc_id": "",
                                    "section_title": "", "url": "", "source": "(no such passage was retrieved)"}
    assert data["unknown_citations"] == [9]
    assert "square brackets" in llm.prompts[0][0]["content"]
    answer(QUESTION, strategy=naive, llm=llm, prompt="basic", cite=False)
    assert "square brackets" not in llm.prompts[1][0]["content"]


def test_an_answer_of_numbers_only_is_asked_again_and_keeps_them(graph, embedder):
    llm = ScriptedCitingLLM("[2]", uncited="The event loop")  # what the 0.5B model did with the hyperlinked prompt
    answered = answer(QUESTION, strategy=strategy("naive", graph, embedder, k=3), llm=llm, prompt="basic")
    assert (answered.answer, answered.cited_answer) == ("The event loop", "The event loop [2]")
    assert [c.number for c in answered.citations] == [2] and answered.cite_call is not None
    assert "square brackets" not in llm.prompts[1][0]["content"] and answered.retrieval.cost.llm_calls == 2


@pytest.mark.parametrize(("reply", "follow_up", "calls", "numbers", "cited"), [
    ("The event loop", "[2]", 2, [2], "The event loop [2]"),
    ("The event loop", "1, 3", 2, [1, 3], "The event loop [1][3]"),  # bare numbers, when no brackets
    ("The event loop", "none of them", 2, [], "The event loop"),
    ("The event loop [3]", "[1]", 1, [3], "The event loop [3]"),  # cited inline anyway: no second turn
    ("Insufficient Information", "[1]", 1, [], "Insufficient Information"),  # nothing to cite
])
def test_short_answers_cite_in_a_follow_up_turn(graph, embedder, reply, follow_up, calls, numbers, cited):
    llm = ScriptedCitingLLM(reply, follow_up)
    naive = strategy("naive", graph, embedder, k=3)
    answered = answer(QUESTION, strategy=naive, llm=llm, prompt="exact_answer", check_citations=False)
    assert answered.answer == strip_markers(reply) and answered.cited_answer == cited
    assert [c.number for c in answered.citations] == numbers and answered.citation_check is None
    assert answered.retrieval.cost.llm_calls == len(llm.prompts) == calls
    assert (answered.cite_call is not None) == (calls == 2)
    if calls == 2:  # the same conversation, one turn longer: a local server reuses its prefix
        assert llm.prompts[1][:2] == llm.prompts[0] and llm.prompts[1][2] == {"role": "assistant",
                                                                              "content": reply}
    answer(QUESTION, strategy=naive, llm=llm, prompt="exact_answer", cite=False)
    assert len(llm.prompts) == calls + 1
    checked = answer(QUESTION, strategy=naive, llm=llm, prompt="exact_answer")  # the default: the numbers checked
    assert checked.answer == answered.answer and checked.retrieval.cost.llm_calls == calls  # no call of its own
    final = [c.number for c in checked.citations]
    assert cited_numbers(checked.cited_answer) == final and strip_markers(checked.cited_answer) == checked.answer
    if numbers:  # the model's numbers kept as it gave them; every number now cited has its reason
        check = checked.citation_check
        assert check.model == numbers and final and set(final) == set(check.why)
        assert check.added == [n for n in final if n not in numbers]
        assert check.dropped == [n for n in numbers if n not in final]
    else:  # nothing cited (the model said none, or Insufficient Information): nothing to check, nothing added
        assert final == [] and checked.citation_check is None


@pytest.mark.parametrize("client", [ScriptedStreamingLLM, ScriptedCitingLLM])
def test_streamed_answer_events(graph, embedder, client):
    llm = client("Tasks [1].")
    assert isinstance(llm, StreamingLLMClient) == (client is ScriptedStreamingLLM)
    assert isinstance(llm, LLMClient)
    events = list(answer_stream(QUESTION, strategy=strategy("naive", graph, embedder, k=2), llm=llm, prompt="basic"))
    kinds = [event.kind for event in events]
    assert kinds[0] == "retrieval" and kinds[-1] == "answer" and set(kinds[1:-1]) == {"text"}
    assert len(kinds) == (5 if client is ScriptedStreamingLLM else 3)  # "Task", "s [1", "]." or the whole
    assert "".join(event.text for event in events[1:-1]) == "Tasks [1]."
    final = events[-1].answer
    assert final.answer == "Tasks." and final.citations[0].chunk_id == events[0].retrieval.items[0].chunk_id


def test_http_answer_stream_sends_server_sent_events(graph, embedder, workdir):
    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": workdir / ".neoweave"}})
    kb = KnowledgeBase(settings, store=graph, embedder=embedder, llm=ScriptedStreamingLLM("Tasks [1]."),
                       read_only=True)
    with running_server(create_app(kb)) as url:
        body = {"question": QUESTION, "strategy": "naive", "k": 2}
        with httpx.stream("POST", f"{url}/answer/stream", json=body, timeout=60) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            blocks = response.read().decode().strip().split("\n\n")
        events = [(block.split("\n")[0].removeprefix("event: "), json.loads(block.split("\n")[1][6:]))
                  for block in blocks]
        assert [kind for kind, _ in events] == ["retrieval", "text", "text", "text", "answer"]
        assert len(events[0][1]["items"]) == 2
        final = events[-1][1]
        assert final["answer"] == "Tasks." and final["citations"][0]["chunk_id"] == events[0][1]["items"][0][
            "chunk_id"]
        plain = httpx.post(f"{url}/answer", json={**body, "cite": False}, timeout=60).json()
        assert plain["answer"] == "Tasks." and plain["cited_answer"] == "Tasks [1]."
        refused = httpx.post(f"{url}/answer/stream", json={**body, "prompt": "nope"}, timeout=60)
        assert refused.status_code == 400 and "unknown prompt" in refused.json()["error"]  # before any event


def test_gateway_streams_the_local_model_and_caches_the_whole(llm_data_dir, model_dir):
    from neoweave.llm import create_gateway

    settings = load_settings(environ={}, overrides={"falkordb": {"data_dir": llm_data_dir}, "llm": {
        "model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir}})
    llm = create_gateway(settings)
    assert isinstance(llm, StreamingLLMClient)
    messages = [{"role": "user", "content": "Count from one to five in words, separated by commas."}]
    stream = llm.chat_stream(messages, stage="stream-test", max_tokens=24)
    pieces = list(stream)
    assert len(pieces) > 2 and stream.result is not None and stream.result.text == "".join(pieces)
    assert stream.result.call.completion_tokens > 0 and not stream.result.call.cached
    again = llm.chat_stream(messages, stage="stream-test", max_tokens=24)
    assert list(again) == [stream.result.text] and again.result.call.cached  # the cache holds the whole
    assert llm.chat(messages, stage="stream-test", max_tokens=24).text == stream.result.text  # shared with chat
    assert llm.ledger.totals(stage="stream-test").calls == 3


def test_citation_scores():
    assert citation_scores(["A", "B"], 0, ["A", "C"]) == {"cites": 1.0, "citation_supported": 1.0,
                                                         "citation_recall": 0.5, "citation_precision": 0.5}
    assert citation_scores(["A", "A"], 1, ["A"]) == {"cites": 1.0, "citation_supported": 1.0,
                                                    "citation_recall": 1.0, "citation_precision": 0.5}
    assert citation_scores([], 0, ["A"]) == {"cites": 0.0, "citation_supported": 0.0, "citation_recall": 0.0}
    assert model_citation_scores([1, 3, 9], ["A", "B", "C"], ["A", "C"]) == {  # 9 names no passage
        "model_citation_precision": 2 / 3, "model_citation_recall": 1.0}
    assert model_citation_scores([], ["A"], ["A"]) == {"model_citation_recall": 0.0}


def passages(*titles: str) -> list[ContextItem]:
    """The HotpotQA sample's passages of these titles, as a retrieval hands them to the answer prompt."""
    records = {}
    for line in HOTPOTQA.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records.setdefault(record["title"], record)
    return [ContextItem(records[title]["text"], f"{records[title]['id']}:0", records[title]["id"],
                        records[title]["id"], 0.0, "seed", section_title=title) for title in titles]


TOUR_PASSAGES = ("Leland, North Carolina", "Myrtle Beach metropolitan area", "Maximum Overdrive",
                 "United (Marian Gold album)", "Carry On Spying")  # what ppr retrieved for the README's question


def test_check_keeps_the_bridge_adds_the_answers_passage_and_drops_the_rest():
    text, check = check_citations(TOUR, "Stephen King [1][2]", passages(*TOUR_PASSAGES), short=True)
    assert text == "Stephen King [1][3]"  # the town the question names, and the film's page that names King
    assert (check.model, check.added, check.dropped) == ([1, 2], [3], [2])
    assert check.why == {1: "named by the question", 3: "holds the answer"}
    assert check.as_dict()["why"] == {"1": "named by the question", "3": "holds the answer"}
    bridge, _ = check_citations(TOUR, "Stephen King [3]", passages(*TOUR_PASSAGES), short=True)
    assert bridge == "Stephen King [3][1]"  # a multi-hop answer needs its bridge: Leland names the film


@pytest.mark.parametrize(("question", "reply", "titles", "checked"), [
    ("Are Medici and Senet both board games?", "yes [1][3]",  # a yes/no answer: what the question names
     ("Medici (board game)", "Senet", "Robert Charles Bell", "David Parlett", "Francis Tresham (game designer)"),
     "yes [1][2]"),
    ("Who is the oldest, Sid Haig or Vic Darchinyan?", "Sid Haig [1][2]",  # one of the options it names
     ("Vic Darchinyan", "Boxing in Armenia", "Yan Naing Oo", "Sid Haig", "Demos Chiang"), "Sid Haig [1][4]"),
    (TOUR, "Stephen King [2][9]", TOUR_PASSAGES, "Stephen King [9][1][3]"),  # a number of nothing stays, flagged
    (TOUR, "Walt Disney [4]", TOUR_PASSAGES, "Walt Disney [4]"),  # no passage holds it: the model's one stays
])
def test_check_on_short_answers(question, reply, titles, checked):
    text, check = check_citations(question, reply, passages(*titles), short=True)
    assert text == checked and check.model == cited_numbers(reply)


def test_check_judges_an_answer_in_sentences_sentence_by_sentence():
    reply = ("Maximum Overdrive was written and directed by Stephen King [2]. It was shot in or around Leland, a "
             "town in Brunswick County [1]. Its trucks come alive.")
    text, check = check_citations(TOUR, reply, passages(*TOUR_PASSAGES), short=False)
    assert text == ("Maximum Overdrive was written and directed by Stephen King [3]. It was shot in or around "
                    "Leland, a town in Brunswick County [1]. Its trucks come alive.")  # no passage holds the last
    assert (check.added, check.dropped) == ([3], [2]) and check.why == {
        3: "supports a sentence no cited passage supports", 1: "supports a sentence it is cited for"}
    covering = ("Maximum Overdrive was directed by Stephen King. It was shot in or around Leland, North Carolina. "
                "[4][1]")  # markers after a paragraph cover its sentences: each needs a passage that supports it
    assert check_citations(TOUR, covering, passages(*TOUR_PASSAGES), short=False)[0] == covering.replace(
        "[4][1]", "[1][3]")
    nothing = "Its trucks come alive [4]."  # no passage supports it: the model's citation is not taken away
    assert check_citations(TOUR, nothing, passages(*TOUR_PASSAGES), short=False)[0] == nothing
    assert check_citations(TOUR, "Stephen King", passages(*TOUR_PASSAGES), short=True) == ("Stephen King", None)


@pytest.mark.parametrize(("text", "keep", "rewritten"), [
    ("no [1][3].", [3, 2], "no [3][2]."),
    ("no [1][3].", [2], "no [2]."),
    ("Paris [1, 2] is big [3].", [2], "Paris [2] is big."),
    ("It runs callbacks [1, 3] and tasks [2-4]. Then it stops. [5]", [1, 2, 4, 5], "It runs callbacks [1] and "
     "tasks [2][4]. Then it stops. [5]"),
    ("Use `a[1]` here [1]", [1], "Use `a[1]` here [1]"),
])
def test_markers_are_rewritten_where_the_model_put_them(text, keep, rewritten):
    assert rewrite_markers(text, lambda _claim, numbers: [n for n in keep if n in numbers or n not in
                                                          cited_numbers(text)]) == rewritten
