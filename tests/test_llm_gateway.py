"""The gateway's orchestration: retries, repair, cache and accounting.

Failure injection uses a scripted local HTTP server (a stub OpenAI endpoint) because a real model cannot be
made to return 503 twice on demand; everything else about the gateway runs for real (the openai client,
tenacity, SQLite). The real local model is exercised in test_llm_local.py.
"""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import openai
import pytest
from pydantic import BaseModel

from neoweave.llm import LLMDatabase, LLMError, LLMGateway, TokenLedger
from neoweave.llm.gateway import is_retryable
from neoweave.llm.structured import StructuredOutputError, parse_structured, repair_json


class Capital(BaseModel):
    country: str
    capital: str


def _completion(content: str, usage: dict | None = None) -> dict:
    body = {"id": "x", "object": "chat.completion", "created": 0, "model": "stub",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}
    if usage is not None:
        body["usage"] = usage
    return body


class Script:
    """Responses served in order: (status, body). Records every request body."""

    def __init__(self, responses):
        self.responses = list(responses)
        self.requests: list[dict] = []


@pytest.fixture
def stub():
    holder: dict = {}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("Content-Length", 0))
            script: Script = holder["script"]
            script.requests.append(json.loads(self.rfile.read(length)))
            status, body = script.responses.pop(0) if script.responses else (500, {"error": "script exhausted"})
            payload = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def make(responses, **options):
        holder["script"] = Script(responses)
        client = openai.OpenAI(api_key="k", base_url=f"http://127.0.0.1:{server.server_port}/v1", max_retries=0,
                               timeout=5)
        options.setdefault("backoff_seconds", 0.01)
        return LLMGateway(client, "stub-model", **options), holder["script"]

    yield make
    server.shutdown()


MESSAGES = [{"role": "user", "content": "What is the capital of France?"}]
USAGE = {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}


def test_a_server_that_fails_twice_then_succeeds_is_retried(stub):
    gateway, script = stub([(503, {"error": "busy"}), (429, {"error": "slow down"}),
                            (200, _completion("Paris", USAGE))])
    result = gateway.chat(MESSAGES, stage="answer")
    assert result.text == "Paris"
    assert result.call.retries == 2 and len(script.requests) == 3
    assert result.call.retry_causes[0].startswith("HTTP 503") and result.call.retry_causes[1].startswith("HTTP 429")
    assert (result.call.prompt_tokens, result.call.completion_tokens) == (11, 5)


def test_a_client_error_is_not_retried(stub):
    gateway, script = stub([(400, {"error": {"message": "bad request"}}), (200, _completion("never"))])
    with pytest.raises(LLMError, match="HTTP 400"):
        gateway.chat(MESSAGES)
    assert len(script.requests) == 1
    assert gateway.ledger.totals().failed_calls == 1


def test_retries_give_up_after_max_retries(stub):
    gateway, script = stub([(500, {"error": "down"})] * 10, max_retries=2)
    with pytest.raises(LLMError, match="HTTP 500"):
        gateway.chat(MESSAGES)
    assert len(script.requests) == 3
    assert gateway.ledger.calls[-1].retries == 2


def test_malformed_json_is_repaired(stub):
    broken = '```json\n{"country": "France", "capital": "Paris",}\n```'
    gateway, script = stub([(200, _completion(broken, USAGE))], structured_output="json_object_schema")
    result = gateway.structured(MESSAGES, Capital, stage="extract")
    assert result.ok and result.value == Capital(country="France", capital="Paris")
    assert len(script.requests) == 1
    sent = script.requests[0]
    assert sent["response_format"]["type"] == "json_object" and "capital" in json.dumps(sent["response_format"])
    assert "JSON schema" in sent["messages"][0]["content"]


def test_invalid_output_is_re_asked_once_then_reported(stub):
    gateway, script = stub([(200, _completion('{"country": "France"}', USAGE)),
                            (200, _completion("I think it is Paris.", USAGE))], structured_output="json_schema")
    result = gateway.structured(MESSAGES, Capital, stage="extract")
    assert not result.ok and result.value is None
    assert "not valid JSON" in result.error
    assert len(script.requests) == 2 and len(result.calls) == 2
    assert "was not valid" in script.requests[1]["messages"][-1]["content"]  # the re-ask carries the error
    assert script.requests[0]["response_format"]["type"] == "json_schema"
    assert gateway.ledger.totals(stage="extract").calls == 2


def test_re_ask_can_fix_the_answer(stub):
    gateway, _ = stub([(200, _completion('{"country": "France"}', USAGE)),
                       (200, _completion('{"country": "France", "capital": "Paris"}', USAGE))])
    result = gateway.structured(MESSAGES, Capital)
    assert result.ok and result.value.capital == "Paris" and len(result.calls) == 2


def test_a_server_without_schema_mode_falls_back_to_the_prompt(stub):
    gateway, script = stub([(400, {"error": {"message": "response_format is not supported"}}),
                            (200, _completion('{"country": "France", "capital": "Paris"}'))])
    result = gateway.structured(MESSAGES, Capital)
    assert result.ok and gateway.structured_output == "prompt"
    assert "response_format" not in script.requests[1]


def test_cache_and_token_totals(stub, tmp_path):
    database = LLMDatabase(tmp_path / "llm.sqlite")
    gateway, script = stub([(200, _completion("Paris", USAGE)), (200, _completion("Rome", USAGE)),
                            (200, _completion("Paris again", USAGE))],
                           database=database, ledger=TokenLedger(database=database, prices={"stub-model": (1.0, 2.0)}))
    gateway.chat(MESSAGES, stage="answer")
    second = gateway.chat(MESSAGES, stage="answer")
    assert second.text == "Paris" and second.call.cached and second.call.total_tokens == 0
    assert second.call.saved_tokens == 16  # what the first call used, for reports of what an answer needs
    assert len(script.requests) == 1
    with gateway.ledger.query_scope("q2"):
        third = gateway.chat([{"role": "user", "content": "And Italy?"}], stage="rewrite")
    uncached = gateway.chat(MESSAGES, stage="answer", cache=False)
    assert third.text == "Rome" and uncached.text == "Paris again" and len(script.requests) == 3
    totals = gateway.ledger.totals()
    assert totals.calls == 4 and totals.cached_calls == 1
    assert totals.prompt_tokens == sum(c.prompt_tokens for c in gateway.ledger.calls) == 33
    assert totals.completion_tokens == 15
    by_stage = gateway.ledger.by_stage()
    assert by_stage["answer"].calls == 3 and by_stage["answer"].prompt_tokens == 22
    assert by_stage["rewrite"].prompt_tokens == 11 and by_stage["rewrite"].calls == 1
    assert gateway.ledger.totals(query="q2").total_tokens == 16
    assert by_stage["rewrite"].cost_usd == pytest.approx((11 * 1.0 + 5 * 2.0) / 1e6)
    assert totals.cost_usd == pytest.approx(sum(t.cost_usd for t in by_stage.values()))
    usage = {row["stage"]: row for row in database.usage()}
    assert usage["answer"]["cached"] == 1 and usage["answer"]["calls"] == 3
    assert usage["rewrite"]["prompt_tokens"] == 11
    # a new gateway on the same file hits the cache too: nothing is paid twice across runs
    again, script_again = stub([(200, _completion("wrong", USAGE))], database=database)
    assert again.chat(MESSAGES, stage="answer").text == "Paris" and script_again.requests == []


def test_missing_usage_is_estimated(stub):
    gateway, _ = stub([(200, _completion("Paris is the capital of France."))])
    call = gateway.chat(MESSAGES).call
    assert call.tokens_estimated and call.prompt_tokens > 0 and call.completion_tokens > 0


def test_retryable_classification():
    import httpx

    request = httpx.Request("POST", "http://x")

    def status(code):
        response = httpx.Response(code, request=request)
        return openai.APIStatusError("x", response=response, body=None)

    assert is_retryable(status(503)) and is_retryable(status(429)) and is_retryable(status(408))
    assert not is_retryable(status(400)) and not is_retryable(status(401)) and not is_retryable(status(404))
    assert is_retryable(openai.APIConnectionError(request=request))


@pytest.mark.parametrize("text,expected", [
    ('{"country": "France", "capital": "Paris"}', "Paris"),
    ('Here you go:\n```json\n{"country": "France", "capital": "Paris"}\n```', "Paris"),
    ('{"country": "France", "capital": "Paris",}', "Paris"),
])
def test_parse_structured_repairs(text, expected):
    assert parse_structured(text, Capital).capital == expected


def test_truncated_arrays_are_closed():
    assert repair_json('{"items": [{"a": 1}, {"a": 2}, {"a": ') == {"items": [{"a": 1}, {"a": 2}]}
    with pytest.raises(StructuredOutputError):
        parse_structured("no json at all", Capital)


def test_request_timeout_defaults_to_the_endpoint_kind_and_follows_the_setting(tmp_path):
    from neoweave.config import load_settings
    from neoweave.llm import ENDPOINT_TIMEOUT, LOCAL_TIMEOUT, create_gateway

    base = {"falkordb": {"data_dir": str(tmp_path)}, "llm": {"base_url": "http://127.0.0.1:9/v1", "cache": False}}
    assert create_gateway(load_settings(environ={}, overrides=base)).client.timeout == ENDPOINT_TIMEOUT == 120
    chosen = load_settings(environ={"NEOWEAVE_LLM_TIMEOUT": "30"}, overrides=base)
    assert create_gateway(chosen).client.timeout == 30
    # the local model finishes a request that timed out before it starts the retry: a long default
    assert LOCAL_TIMEOUT > ENDPOINT_TIMEOUT
    with pytest.raises(Exception, match="timeout"):
        load_settings(environ={"NEOWEAVE_LLM_TIMEOUT": "0"}, overrides=base)


def test_clear_cache_forgets_responses_and_keeps_the_usage_log(stub, cli, workdir):
    """`neoweave llm clear-cache`: delete does not purge the content-keyed cache; this does."""
    database = LLMDatabase(workdir / ".neoweave" / "llm.sqlite")
    gateway, _ = stub([(200, _completion("Paris", USAGE))], database=database)
    gateway.chat(MESSAGES, stage="answer")
    database.close()
    assert "cleared 1 cached LLM responses" in cli("llm", "clear-cache").stdout
    database = LLMDatabase(workdir / ".neoweave" / "llm.sqlite")
    again, script = stub([(200, _completion("Paris, asked again", USAGE))], database=database)
    assert again.chat(MESSAGES, stage="answer").text == "Paris, asked again" and len(script.requests) == 1
    assert {row["stage"]: row["calls"] for row in database.usage()} == {"answer": 2}  # the log stays
