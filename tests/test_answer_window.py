"""Answers whose context does not fit the model's context window: the endpoint's refusal read (its numbers), the
lowest-ranked passages left out until the prompt fits, the whole retrieval kept in the result. A real local model
with a small window, streamed and not; a scripted client for the estimate and the case where nothing fits."""

from __future__ import annotations

import json

import httpx
import openai
import pytest
from conftest import ScriptedClient, stdlib_corpus

from neoweave.config import load_settings
from neoweave.ingest import IngestOptions, Ingestor, SourceOptions
from neoweave.llm import ContextTooLong, create_gateway
from neoweave.llm.gateway import ChatResult, context_too_long
from neoweave.llm.ledger import LLMCall
from neoweave.llm.local import MODELS, LocalModelServer
from neoweave.mcp.views import answer_data
from neoweave.query import strategy
from neoweave.query.answer import answer, answer_stream, passages_that_fit
from neoweave.query.prompts import get_prompt, render

QUESTION = "Which functions does this module define?"
LLAMA_CPP_BODY = {"message": "This model's maximum context length is 1024 tokens. However, you requested 2146 tokens "
                             "(2130 in the messages, 16 in the completion). Please reduce the length of the messages "
                             "or completion.", "type": "invalid_request_error", "param": "messages",
                  "code": "context_length_exceeded"}


def _refusal(body: dict) -> openai.BadRequestError:
    response = httpx.Response(400, request=httpx.Request("POST", "http://127.0.0.1:1/v1/chat/completions"))
    return openai.BadRequestError(body["message"], response=response, body=body)


def test_an_endpoint_s_refusal_of_a_long_prompt_is_read_with_its_numbers():
    error = context_too_long(_refusal(LLAMA_CPP_BODY), "http://127.0.0.1:1/v1", "qwen")
    assert isinstance(error, ContextTooLong)
    assert (error.window, error.prompt_tokens, error.completion_tokens) == (1024, 2130, 16)
    assert "(2,130 tokens) does not fit the context window of qwen (1,024 tokens)" in error.message
    assert "llm.local_context" in error.hint
    openai_style = {"message": "This model's maximum context length is 8192 tokens. However, your messages resulted "
                               "in 9000 tokens. Please reduce the length of the messages.", "code": None}
    error = context_too_long(_refusal(openai_style), "https://api.example/v1", "gpt")
    assert (error.window, error.prompt_tokens, error.completion_tokens) == (8192, 9000, None)
    assert context_too_long(_refusal({"message": "'response_format' is not supported", "code": None}), "e", "m") is None
    assert context_too_long(ValueError("maximum context length is 5"), "e", "m") is None


@pytest.fixture
def records_graph(falkordb_store, embedder):
    """Twelve records of the standard library's source: passages of some hundreds of tokens each."""
    records = [json.loads(line) for line in stdlib_corpus(12).splitlines()]
    Ingestor(falkordb_store, embedder, IngestOptions(sources=SourceOptions(), progress=False)).ingest_records(
        records, source="stdlib")
    return falkordb_store


def test_a_context_too_long_for_a_real_model_is_cut_to_its_best_passages(records_graph, embedder, tmp_path,
                                                                         model_dir):
    settings = load_settings(environ={}, overrides={
        "falkordb": {"data_dir": tmp_path}, "llm": {"model": "qwen2.5-coder-0.5b", "local_model_dir": model_dir,
                                                    "local_context": 1024}})
    llm = create_gateway(settings)
    try:
        naive = strategy("naive", records_graph, embedder, k=8)
        assert naive.retrieve(QUESTION).context_tokens > 1500  # the whole context could never fit
        result = answer(QUESTION, strategy=naive, llm=llm, prompt="unified", max_tokens=16, cite=False)
        assert result.answer and 1 <= result.context_dropped < 8
        assert len(result.retrieval.items) == 8  # the result keeps what was retrieved, and says what was left out
        assert result.call.prompt_tokens < 1024 - 16
        refused = [call for call in llm.ledger.calls if call.error]
        assert refused and "maximum context length is 1024" in refused[0].error
        assert result.as_dict()["context_dropped"] == result.context_dropped
        events = list(answer_stream(QUESTION, strategy=naive, llm=llm, prompt="basic", max_tokens=16, cite=False))
        streamed = events[-1].answer
        assert events[0].kind == "retrieval" and events[-1].kind == "answer"
        assert streamed.answer and 1 <= streamed.context_dropped < 8 and len(streamed.retrieval.items) == 8
    finally:
        LocalModelServer(MODELS["qwen2.5-coder-0.5b"], state_dir=tmp_path / "llm").stop()


class WindowedModel(ScriptedClient):
    """An LLMClient double with a context window: refuses, as llama.cpp's server does, a prompt of more tokens
    (four characters each) than the window holds beside the completion; else answers "fits"."""

    model = "windowed"

    def __init__(self, window: int) -> None:
        self.window = window
        self.prompts: list[int] = []
        self.sent = ""

    def chat(self, messages, *, max_tokens=None, **_):
        tokens = sum(len(message["content"]) for message in messages) // 4
        self.prompts.append(tokens)
        self.sent = messages[-1]["content"]
        if tokens + (max_tokens or 0) > self.window:
            raise ContextTooLong("too long", window=self.window, prompt_tokens=tokens, completion_tokens=max_tokens)
        return ChatResult("fits", LLMCall(stage="answer", model=self.model, prompt_tokens=tokens))


def test_passages_are_left_out_from_the_end_until_the_prompt_fits(records_graph, embedder):
    naive = strategy("naive", records_graph, embedder, k=6)
    whole = render(get_prompt("basic"), naive.retrieve(QUESTION))
    whole_tokens = sum(len(m["content"]) for m in whole) // 4
    model = WindowedModel(window=whole_tokens // 2)
    result = answer(QUESTION, strategy=naive, llm=model, prompt="basic", max_tokens=20, cite=False)
    assert result.answer == "fits" and model.prompts[0] == whole_tokens and model.prompts[-1] + 20 <= model.window
    kept = 6 - result.context_dropped
    assert result.retrieval.items[kept - 1].text in model.sent and result.retrieval.items[kept].text not in model.sent
    one_more = result.retrieval.items[kept]  # the best passage left out would not have fitted, or only just
    assert (model.prompts[-1] + len(one_more.text) // 4) + 20 > model.window * 0.9
    assert result.citations == [] and len(result.retrieval.items) == 6
    told = answer_data(result)  # the MCP answer tool says it too, as POST /answer does
    assert told["context_dropped"] == result.context_dropped == result.as_dict()["context_dropped"] > 0
    assert len(told["retrieval"]["items"]) == 6


def test_a_window_that_holds_no_passage_is_a_clear_error(records_graph, embedder):
    naive = strategy("naive", records_graph, embedder, k=3)
    with pytest.raises(ContextTooLong):
        answer(QUESTION, strategy=naive, llm=WindowedModel(window=60), prompt="basic", max_tokens=20, cite=False)
    refusal = ContextTooLong("too long", window=None)
    assert passages_that_fit(naive.retrieve(QUESTION), [{"content": "x" * 400}], refusal, 20) is None
